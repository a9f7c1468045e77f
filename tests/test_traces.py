"""What a pasted trace says (`index/traces.py`): error messages as compared, stack frames innermost
last in every language, and how two stacks overlap. Wrappers (`raised_from`) are tested beside
the evidence they leave out, in `tests/test_duplicate_evidence.py`."""

from __future__ import annotations

import re

from issue_assistant.index.traces import frame_overlap, frames, message_key


def test_an_error_message_matches_at_other_sizes_and_values():
    a = message_key("ValueError: Requested slice [:999999999] incompatible with 60000 examples.")
    b = message_key("AssertionError: Requested slice [:10] incompatible with 20 examples.")
    assert a == b == "requested slice incompatible with examples"
    assert message_key("KeyError: 'x'") == ""  # too short to say which error it is
    assert message_key("OSError: /a/b.txt not found here") != message_key("OSError: disk full")


def test_frames_are_read_from_python_ipython_colab_javascript_and_java():
    text = (
        'File "/x/load.py", line 3, in load_dataset\n'
        "File ~/site/builder.py:1031, in DatasetBuilder.download_and_prepare(self)\n"
        "[/usr/lib/info_utils.py](https://x) in verify_splits(expected)\n"
        "    at parseConfig (src/config.ts:12:5)\n"
        "    at org.acme.Loader.read(Loader.java:77)\n"
    )
    # innermost last: a run of `at` lines, which list the innermost first, is read in reverse
    assert frames(text) == (
        "load.py:load_dataset",
        "builder.py:download_and_prepare",
        "info_utils.py:verify_splits",
        "Loader.java:read",
        "config.ts:parseConfig",
    )


DOTNET = """Unhandled exception. System.InvalidOperationException: Sequence contains no elements
   at System.Linq.ThrowHelper.ThrowNoElementsException()
   at System.Linq.Enumerable.First[TSource](IEnumerable`1 source)
   at Microsoft.EntityFrameworkCore.Query.QueryCompiler.Execute[TResult](Expression query) in /src/EFCore/Query/QueryCompiler.cs:line 85
   at App.Program.<RunAsync>d__5.MoveNext() in C:\\src\\App\\Program.cs:line 12
   at System.Collections.Generic.List`1.ForEach(Action`1 action)
   at App.Program.Main(String[] args)
"""  # noqa: E501


def test_dotnet_frames_are_read_as_type_and_method_innermost_last():
    """A .NET trace lists the frame nearest the error first, with or without the file (symbols);
    an async method's state machine (`<RunAsync>d__5.MoveNext`) is the method it runs."""
    assert frames(DOTNET) == (
        "Program:Main",
        "List:ForEach",
        "Program:RunAsync",
        "QueryCompiler:Execute",
        "Enumerable:First",
        "ThrowHelper:ThrowNoElementsException",
    )
    # the same crash reported without symbols shares its innermost frames
    bare = re.sub(r" in \S+:line \d+", "", DOTNET)
    assert frame_overlap(frames(DOTNET), frames(bare)) == 1.0
    # another crash through the same entry point shares only the outermost: not its innermost
    other = DOTNET.replace("ThrowHelper.ThrowNoElementsException", "Cache.Evict").replace(
        "Enumerable.First[TSource]", "Cache.Get[T]"
    )
    assert frame_overlap(frames(DOTNET), frames(other)) == 0.5
    # prose that names a method is no frame
    assert frames("Look at System.Linq when it fails, or at App.Main (see the docs).") == ()
    assert frames("The thread is then stuck at `waiter.acquire()` in the builtin file.") == ()
    assert frames("It hangs at waiter.acquire() in threading.py.") == ()  # not a trace's line


def test_one_shared_frame_is_no_evidence_and_the_innermost_count():
    assert frame_overlap(("main.py:<module>", "a.py:f"), ("main.py:<module>", "b.py:g")) == 0.0
    mine = ("main.py:<module>", "a.py:f", "b.py:g", "c.py:h")
    assert frame_overlap(mine, ("c.py:h", "b.py:g")) == 0.5
    assert frame_overlap(mine, mine) == 1.0


def test_a_module_qualified_exception_name_is_not_an_error_message():
    """`datasets.utils.info_utils.ExpectedMoreSplits: {'test'}`: the class is no message (and
    the rest is a value): two reports of that exception from other causes do not share an
    error message."""
    assert message_key("datasets.utils.info_utils.ExpectedMoreSplits: {'test'}") == ""
    assert message_key("pyarrow.lib.ArrowInvalid: Column 1 named x expected length 5") == (
        "column named expected length"
    )
    assert message_key("requests.exceptions.ConnectionError: Couldn't reach the hub") != ""
