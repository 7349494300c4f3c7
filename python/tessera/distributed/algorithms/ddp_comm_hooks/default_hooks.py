"""The default DDP communication hooks: each takes (process_group, bucket) and returns a
Future of the bucket's reduced flat tensor. DistributedDataParallel recognises these three
and runs them inside its C++ reducer; called directly they do the same work in Python."""
import tessera
import tessera.distributed as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _mean_of(process_group, tensor):
    group = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(dist.get_world_size(group))
    return dist.all_reduce(tensor, group=group, async_op=True).get_future()


def allreduce_hook(process_group, bucket):
    """The bucket's mean across the group."""
    return _mean_of(process_group, bucket.buffer()).then(lambda fut: fut.value()[0])


def _compress_hook(dtype, process_group, bucket):
    buffer = bucket.buffer()
    compressed = buffer.to(dtype)

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer

    return _mean_of(process_group, compressed).then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The mean sent as float16 (half the bytes), written back in the bucket's dtype."""
    return _compress_hook(tessera.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """The mean sent as bfloat16, written back in the bucket's dtype."""
    return _compress_hook(tessera.bfloat16, process_group, bucket)
