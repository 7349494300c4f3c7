"""The autograd Function behind SyncBatchNorm's training forward (torch keeps it in the same
place): each rank takes per-channel statistics of its shard, the ranks all-gather them with
their sample counts and merge them, and each normalises its shard with the merged ones. The
backward all-reduces the two per-channel sums the input gradient needs; the weight and bias
gradients stay local (DistributedDataParallel averages them)."""
import tessera

from ...autograd.function import Function

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, process_group, world_size):
        from ... import distributed as dist
        per_channel = input.numel() // input.size(1)
        if per_channel == 1 and world_size < 2:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {per_channel}")
        channels = input.shape[1]
        if input.numel() > 0:
            mean, invstd = tessera.batch_norm_stats(input, eps)
            count = tessera.full((1,), per_channel, dtype=mean.dtype)
            combined = tessera.cat([mean, invstd, count])
        else:
            # an empty shard still joins the all_gather; its zero count drops it below
            stats_dtype = tessera.float32 if input.dtype in (tessera.float16, tessera.bfloat16) else input.dtype
            combined = tessera.zeros(2 * channels + 1, dtype=stats_dtype)
        gathered = [tessera.empty_like(combined) for _ in range(world_size)]
        dist.all_gather(gathered, combined, process_group)
        mean_all, invstd_all, count_all = tessera.stack(gathered).split(channels, dim=1)
        present = count_all.squeeze(-1) >= 1
        mean_all, invstd_all, count_all = mean_all[present], invstd_all[present], count_all[present]
        counts = count_all.view(-1)
        if running_mean is not None and counts.dtype != running_mean.dtype:
            counts = counts.to(running_mean.dtype)
        mean, invstd = tessera.batch_norm_gather_stats_with_counts(input, mean_all, invstd_all, running_mean,
                                                                   running_var, momentum, eps, counts)
        ctx.save_for_backward(input, weight, mean, invstd, count_all.to(tessera.int32))
        ctx.process_group = process_group
        if input.numel() == 0:
            return tessera.empty_like(input)
        return tessera.batch_norm_elemt(input, weight, bias, mean, invstd, eps)

    @staticmethod
    def backward(ctx, grad_output):
        from ... import distributed as dist
        input, weight, mean, invstd, counts = ctx.saved_tensors
        need_input, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_input = grad_weight = grad_bias = None
        channels = input.shape[1]
        if input.numel() > 0:
            sum_dy, sum_dy_xmu, grad_weight, grad_bias = tessera.batch_norm_backward_reduce(
                grad_output, input, mean, invstd, weight, need_input, need_weight and weight is not None,
                need_bias and weight is not None)
            if need_input:
                both = tessera.cat([sum_dy, sum_dy_xmu])
                dist.all_reduce(both, dist.ReduceOp.SUM, ctx.process_group)
                sum_dy, sum_dy_xmu = both.split(channels)
                if weight is not None and weight.dtype != mean.dtype:
                    weight = weight.to(mean.dtype)
                grad_input = tessera.batch_norm_backward_elemt(grad_output, input, mean, invstd, weight, sum_dy,
                                                               sum_dy_xmu, counts)
        elif need_input:
            # nothing to contribute, but the peers' all_reduce needs this rank's part
            stats_dtype = mean.dtype
            dist.all_reduce(tessera.zeros(2 * channels, dtype=stats_dtype), dist.ReduceOp.SUM, ctx.process_group)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None
