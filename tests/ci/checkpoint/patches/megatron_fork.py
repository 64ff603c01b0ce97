"""A stand-in for a different installed Megatron-Core: the project's Megatron-LM fork, whose own
`FileSystemWriterAsync.preload_tensors` copies with `non_blocking=False` whenever `torch.version.hip` is
set (its fix of the ROCm pinned-memory fault, which let the project delete its own workaround).

Only one megatron-core is installed here, so the fork's source is made from it: the installed
function's source, with the fork's two lines at the top of its body, compiled under the installed
file's name and put in place of that function's code. The function stays the object Megatron-Core's
class holds, in Megatron-Core's module, with its code in Megatron-Core's file: as it would be were
the fork installed, and as the harness's attribution must then report it (Megatron-Core's own, not
the project's). Imported (`--import`) before anything saves.
"""

import ast
import inspect
import textwrap
import warnings

with warnings.catch_warnings():  # Megatron-Core warns about optional fused kernels at import
    warnings.simplefilter("ignore")
    from megatron.core.dist_checkpointing.strategies.filesystem_async import FileSystemWriterAsync

_FORK_S_LINES = "if torch.version.hip:\n    non_blocking = False\n"


def _fork_s_preload_tensors() -> None:
    function = inspect.getattr_static(FileSystemWriterAsync, "preload_tensors").__func__
    code = function.__code__
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    [definition] = tree.body
    assert isinstance(definition, ast.FunctionDef)
    definition.decorator_list = []
    definition.body[1:1] = ast.parse(_FORK_S_LINES).body  # after the docstring
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, code.co_firstlineno - 1)
    compiled = compile(tree, code.co_filename, "exec")
    [fork_s] = [const for const in compiled.co_consts if inspect.iscode(const) and const.co_name == code.co_name]
    function.__code__ = fork_s


_fork_s_preload_tensors()
