# A/B of NN and RR transforms: DIF passes plus the separate permutation (`ntt_bit_reverse_tiled`) against the
# permutation folded into the passes (out of place through a scratch buffer, PassParams::reverse_in/out).
# usage: python3 ntt_orders.py VARIANT[,VARIANT...] LOG_N[,LOG_N...] [REPS] [ORDER,...]
#   ORDER: NR, NN, RR (DIF sweeps; the default) or NN-dit, RR-dit (DIT sweeps with the reversal folded in)
#   VARIANT = NAME[@perm]: $CUBINS/NAME.cubin (default ./cubins) with ntt_pass_dif and ntt_bit_reverse_tiled;
#   @perm: kernels of the old signature (data, twiddles, lo, hi, w0, w1), run as passes + permutation;
#   otherwise the new one (src, dst, twiddles, lo, hi, w0, w1), run folded.
# Same random data and twiddles for every variant (only timing and bit-equality are checked); NR (plain DIF
# passes, in place) is timed too, to see what the extra argument and flags cost a pass. Outputs are compared bit
# for bit with the first variant's; a whole transform is timed with CUDA events, median of REPS (7).
# The pass geometry mirrors kernels/src/ntt.rs (plan::passes, PassParams::encode) for batch 1, no scaling.
import sys, os, statistics
import cupy as cp
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ntt_passes import passes, rand_fr  # noqa: E402  (same geometry and inputs)

cubins = os.environ.get("CUBINS", "cubins")
variants = sys.argv[1].split(',')
sizes = [int(x) for x in sys.argv[2].split(',')]
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 7
orders = sys.argv[4].split(',') if len(sys.argv) > 4 else ['NR', 'NN', 'RR']
mods = {v: cp.RawModule(path=f"{cubins}/{v.split('@')[0]}.cubin") for v in variants}


def permute(v, data, log_n):
    f = mods[v].get_function('ntt_bit_reverse_tiled')
    shared = 2 * 16 * 17 * 32
    f.max_dynamic_shared_size_bytes = shared
    f(((1 << log_n) >> 8,), (256,), (data, cp.uint32(log_n)), shared_mem=shared)


def run(v, order, log_n, data, scratch, tw):
    # NR, NN, RR: DIF sweeps. NN-dit, RR-dit: the same orderings from a DIT sweep (bit-reversed in, natural out),
    # the reversal in its first load (NN) or last store (RR); with random twiddles a DIT computes another
    # function than a DIF, so those rows compare against permutation + DIT.
    dit = order.endswith('-dit')
    base = order.split('-')[0]
    f = mods[v].get_function('ntt_pass_dit' if dit else 'ntt_pass_dif')
    old = v.endswith('@perm')
    ps = passes(log_n, dit)
    # Where a separate permutation goes, and which end of the sweep the folded reversal takes.
    perm_before = (base == 'RR') != dit
    if old and base != 'NR' and perm_before:
        permute(v, data, log_n)
    for i, (ln, lb, k, ll, lh, lt) in enumerate(ps):
        lt_ = lh + k + ll
        w0 = ln | lb << 5 | k << 10 | ll << 15 | lh << 20 | lt << 25
        threads = min(128, 1 << (lt_ - 1))
        grid, block, shared = ((1 << (ln - lt_),), (threads,), 32 << lt_)
        if old:
            f(grid, block, (data, tw, tw, tw, cp.uint32(w0), cp.uint32(0)), shared_mem=shared)
            continue
        first, last = i == 0, i + 1 == len(ps)
        folded = base != 'NR'
        src = scratch if folded and not first else data
        dst = scratch if folded and not last else data
        w1 = 0
        if folded:
            w1 = (1 << 9) if (perm_before and first) else (1 << 10) if (not perm_before and last) else 0
        f(grid, block, (src, dst, tw, tw, tw, cp.uint32(w0), cp.uint32(w1)), shared_mem=shared)
    if old and base != 'NR' and not perm_before:
        permute(v, data, log_n)


print("| transform | " + " | ".join(variants) + " |")
print("|---|" + "---:|" * len(variants))
for log_n in sizes:
    src = rand_fr(1 << log_n, 1234 + log_n)
    tw = rand_fr(1 << (log_n - 1), 99 + log_n)
    data = cp.empty_like(src)
    scratch = cp.empty_like(src)
    for order in orders:
        ref, ok, times = None, {}, {v: [] for v in variants}
        for v in variants:
            data[...] = src
            run(v, order, log_n, data, scratch, tw)
            cp.cuda.Device().synchronize()
            if ref is None:
                ref, ok[v] = data.copy(), True
            else:
                ok[v] = bool(cp.array_equal(ref, data))
        s, e = cp.cuda.Event(), cp.cuda.Event()
        for r in range(reps):
            for v in variants:
                s.record(); run(v, order, log_n, data, scratch, tw); e.record(); e.synchronize()
                times[v].append(cp.cuda.get_elapsed_time(s, e))
        row = [f"{statistics.median(times[v]):.3f}" + ("" if ok[v] else " (DIFFERS)") for v in variants]
        print(f"| 2^{log_n} {order} | " + " | ".join(row) + " |", flush=True)
        del ref
    del src, tw, data, scratch
    cp.get_default_memory_pool().free_all_blocks()
