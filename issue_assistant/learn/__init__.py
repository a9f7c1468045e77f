"""The learned label model of the offline engine: features, per-group classifiers, calibration."""
