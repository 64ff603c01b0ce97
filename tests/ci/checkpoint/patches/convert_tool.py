"""A checkpoint conversion tool in the shape a real project's has: its module imports what a CPU runner lacks
(a serving engine and a cluster scheduler, here `absent_serving_engine` and `absent_cluster`, which no
registry has; Megatron-LM's `megatron.training`, which megatron-core's wheel does not ship beside
`megatron.core`), uses them at import (a decorator, a base class, names from their submodules), and its
`main()` swaps Megatron-Core's writer under `if torch.version.hip:`, then reads its command line and
builds the model, which fails here: there is no Hugging Face checkpoint to convert.

Without `--stub-missing-imports` the module never imports; with it, `main()` runs as far as its swap and
raises after it.
"""

import argparse
import warnings
from pathlib import Path

import absent_cluster  # type: ignore[import-not-found]
import torch
from absent_serving_engine.srt.server_args import ServerArgs  # type: ignore[import-not-found]
from megatron.training.arguments import parse_args as megatron_arguments

with warnings.catch_warnings():  # Megatron-Core warns about optional fused kernels at import
    warnings.simplefilter("ignore")
    from megatron.core.dist_checkpointing.strategies import filesystem_async
    from megatron.core.dist_checkpointing.strategies.filesystem_async import FileSystemWriterAsync


class ROCmFileSystemWriterAsync(FileSystemWriterAsync):  # type: ignore[misc]
    """On HIP every copy to the host blocks."""

    @staticmethod
    def preload_tensors(write_buckets, non_blocking=True):
        return FileSystemWriterAsync.preload_tensors(write_buckets, non_blocking and not torch.version.hip)


@absent_cluster.remote(num_gpus=1)
class ConversionWorker(absent_cluster.actor.ActorClass):  # type: ignore[misc]
    def convert(self, shard: int) -> None:
        ServerArgs(model_path="checkpoints/hf").validate()


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="convert a Hugging Face checkpoint to torch_dist")
    parser.add_argument("--hf-checkpoint", type=Path, default=Path("checkpoints/hf"))
    parser.add_argument("--save", type=Path, default=Path("checkpoints/torch_dist"))
    return parser


def _build_model(args: argparse.Namespace) -> None:
    megatron_arguments(extra_args_provider=None)
    if not (args.hf_checkpoint / "config.json").is_file():
        raise FileNotFoundError(f"no Hugging Face checkpoint at {args.hf_checkpoint}")


def main() -> None:
    if torch.version.hip:
        from megatron.core.dist_checkpointing.strategies import torch as torch_strategy

        filesystem_async.FileSystemWriterAsync = ROCmFileSystemWriterAsync
        torch_strategy.FileSystemWriterAsync = ROCmFileSystemWriterAsync
    _build_model(_arguments().parse_args())


def main_checking_its_arguments_first() -> None:
    """The same tool with its steps the other way round: it raises before it swaps anything."""
    _build_model(_arguments().parse_args())
    main()


def main_after_the_removal() -> None:
    """The tool once the project removed its workaround: it swaps nothing, and still fails to build the model."""
    _build_model(_arguments().parse_args())
