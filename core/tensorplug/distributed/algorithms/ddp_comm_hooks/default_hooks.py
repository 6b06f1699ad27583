"""PyTorch's default DDP communication hooks, written on ``tensorplug.distributed``'s public functions
(so they work with any distributed plugin).

A hook is called as ``hook(state, bucket)`` for each gradient bucket, once the bucket's gradients
are in its flat buffer (``bucket.buffer()``); it starts the bucket's reduction and returns a future
whose value is the averaged flat buffer, which DDP writes back into the gradients. Register one
with ``ddp_model.register_comm_hook(process_group_or_None, hook)``.
"""

from __future__ import annotations

import tensorplug
import tensorplug.distributed as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def allreduce_hook(process_group, bucket):
    """Average the bucket over the group (``process_group``, or the default group when None) in the
    gradients' own dtype: what DDP does without a hook."""
    group = _group(process_group)
    buffer = bucket.buffer()
    buffer.div_(group.size())
    return dist.all_reduce(buffer, group=group, async_op=True).get_future().then(lambda fut: fut.value()[0])


def _compressing(dtype, name):
    def hook(process_group, bucket):
        group = _group(process_group)
        buffer = bucket.buffer()
        compressed = buffer.to(dtype).div_(group.size())
        fut = dist.all_reduce(compressed, group=group, async_op=True).get_future()

        def decompress(fut):
            buffer.copy_(fut.value()[0])
            return buffer
        return fut.then(decompress)
    hook.__name__ = hook.__qualname__ = name
    hook.__doc__ = (f"Average the bucket in {dtype}: half the bytes on the wire, the gradients rounded to {dtype} "
                    f"(divided by the group size first, as PyTorch's hook), then written back in their dtype.")
    return hook


fp16_compress_hook = _compressing(tensorplug.float16, "fp16_compress_hook")
bf16_compress_hook = _compressing(tensorplug.bfloat16, "bf16_compress_hook")
