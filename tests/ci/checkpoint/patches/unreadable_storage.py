"""A project patch after which no checkpoint can be read: every data read raises, as it would on
storage that fails under the load. It stands in for that failure, which cannot be produced on
demand between the harness's save and its load; the load itself, and DCP's wrapping of the
error in a CheckpointException (a BaseException), are real."""

from torch.distributed.checkpoint.filesystem import FileSystemReader


def _unreadable(self, plan, planner):
    raise OSError(5, "Input/output error (unreadable storage, a test's patch)")


FileSystemReader.read_data = _unreadable  # type: ignore[method-assign]
