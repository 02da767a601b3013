# A/B of the NTT pass kernels (ntt_pass_dif / ntt_pass_dit) over sm_90 cubins, on the GPU host (cupy).
# usage: python3 ntt_passes.py VARIANT[,VARIANT...] LOG_N[,LOG_N...] [REPS]
#   VARIANT = NAME[@rev][@tB][@old]: $CUBINS/NAME.cubin (default ./cubins); @rev runs DIF's passes in the order
#   opposite to plan::passes (the pre-2026-12-03 order), @tB caps tiles and passes at 2^B elements, @old for
#   kernels from before the reversal flags (one in-place `data` argument instead of `src, dst`).
# Every variant transforms the same random canonical data with the same random twiddle table (values need not
# be roots of unity: only timing and bit-equality between variants are checked); the outputs are compared bit for
# bit with the first variant's; a whole transform's passes are timed with CUDA events, median of REPS (7).
# The pass geometry mirrors kernels/src/ntt.rs (plan::passes, PassParams::encode) for batch 1, no scaling.
import sys, os, math, statistics
import cupy as cp

def passes(log_n, dit, opts=()):
    T = 10
    for o in opts:
        if o.startswith('t'):
            T = int(o[1:])
    P = math.ceil(log_n / T)
    bits = [log_n // P + (1 if p < log_n % P else 0) for p in range(P)]
    if not dit and 'rev' not in opts:
        bits = bits[::-1]   # plan::passes: DIF takes the larger passes last (on the low bits)
    low = 0 if dit else log_n
    tile_bits = min(max(log_n - 8, 0), T)
    out = []
    for k in bits:
        log_b = low if dit else low - k
        budget = max(tile_bits, k) - k
        log_l = min(log_b, budget)
        hi_tz = log_n - log_b - k
        log_h = min(budget - log_l, hi_tz)
        out.append((log_n, log_b, k, log_l, log_h, log_n))
        low = low + k if dit else low - k
    return out

fill = cp.ElementwiseKernel('uint64 seed', 'raw uint32 out', '''
  unsigned long long x = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27; x *= 0x94D049BB133111EBull; x ^= x >> 33;
  unsigned int v = (unsigned int)x;
  if ((i & 7) == 7) v = v % 0x73eda752u;
  out[i] = v;''', 'fill')

def rand_fr(count, seed):
    a = cp.empty(count * 8, dtype=cp.uint32)
    fill(cp.uint64(seed), a, size=count * 8)
    return a

def run(v, dit, log_n, data, tw):
    f = mods[v].get_function('ntt_pass_dit' if dit else 'ntt_pass_dif')
    for (ln, lb, k, ll, lh, lt) in passes(log_n, dit, v.split('@')[1:]):
        lt_ = lh + k + ll
        w0 = ln | lb << 5 | k << 10 | ll << 15 | lh << 20 | lt << 25
        threads = min(128, 1 << (lt_ - 1))
        # Since the reversal flags (2026-12-03) the kernels take (src, dst, ...); `@old` cubins take (data, ...).
        io = (data,) if 'old' in v.split('@')[1:] else (data, data)
        f((1 << (ln - lt_),), (threads,), io + (tw, tw, tw, cp.uint32(w0), cp.uint32(0)), shared_mem=32 << lt_)

if __name__ == "__main__":
    cubins = os.environ.get("CUBINS", "cubins")
    variants = sys.argv[1].split(',')
    sizes = [int(x) for x in sys.argv[2].split(',')]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    mods = {v: cp.RawModule(path=f"{cubins}/{v.split('@')[0]}.cubin") for v in variants}
    print("| transform | " + " | ".join(variants) + " |")
    print("|---|" + "---:|" * len(variants))
    for log_n in sizes:
        src = rand_fr(1 << log_n, 1234 + log_n)
        tw = rand_fr(1 << (log_n - 1), 99 + log_n)
        for dit in (False, True):
            ref = None
            times = {v: [] for v in variants}
            data = cp.empty_like(src)
            ok = {}
            for v in variants:
                data[...] = src
                run(v, dit, log_n, data, tw)
                cp.cuda.Device().synchronize()
                if ref is None:
                    ref = data.copy()
                    ok[v] = True
                else:
                    ok[v] = bool(cp.array_equal(ref, data))
            s, e = cp.cuda.Event(), cp.cuda.Event()
            for r in range(reps):
                for v in variants:
                    s.record(); run(v, dit, log_n, data, tw); e.record(); e.synchronize()
                    times[v].append(cp.cuda.get_elapsed_time(s, e))
            row = [f"{statistics.median(times[v]):.3f}" + ("" if ok[v] else " (DIFFERS)") for v in variants]
            print(f"| 2^{log_n} {'DIT' if dit else 'DIF'} | " + " | ".join(row) + " |", flush=True)
            del ref
        del src, tw, data
        cp.get_default_memory_pool().free_all_blocks()
