# A/B of ntt_bit_reverse_tiled over sm_90 cubins, on the GPU host (cupy).
# usage: python3 bit_reverse.py VARIANT[,VARIANT...] LOG_N[,LOG_N...] [REPS]
#   $CUBINS/VARIANT.cubin (default ./cubins); a name containing "e5" is run with 32 x 32 tiles
#   (PERMUTE_EDGE_BITS = 5), others with 16 x 16.
# The output is checked against a cupy gather by bit-reversed index; the time is the median of REPS (7), the
# rate 64 bytes (one read, one write) per element; a device-to-device copy of the same buffer for reference.
import sys, os, statistics
import cupy as cp
cubins = os.environ.get("CUBINS", "cubins")
variants = sys.argv[1].split(',')
sizes = [int(x) for x in sys.argv[2].split(',')]
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 7
mods = {v: cp.RawModule(path=f"{cubins}/{v}.cubin") for v in variants}
def rev(log_n):
    i = cp.arange(1 << log_n, dtype=cp.uint64)
    r = cp.zeros_like(i)
    for b in range(log_n):
        r |= ((i >> b) & 1) << (log_n - 1 - b)
    return r
print("| lg n | " + " | ".join(variants) + " | d2d copy |")
print("|---|" + "---:|" * (len(variants) + 1))
for lg in sizes:
    n = 1 << lg
    src = cp.random.randint(0, 2**31, size=(n, 8), dtype=cp.int64).astype(cp.uint32)
    expect = src[rev(lg)]
    data = cp.empty_like(src)
    row = []
    s, e = cp.cuda.Event(), cp.cuda.Event()
    for v in variants:
        f = mods[v].get_function('ntt_bit_reverse_tiled')
        edge = 5 if 'e5' in v else 4
        shared = 2 * (1 << edge) * ((1 << edge) + 1) * 32
        f.max_dynamic_shared_size_bytes = shared
        data[...] = src
        launch = lambda: f((n >> (2 * edge),), (1 << (2 * edge),), (data, cp.uint32(lg)), shared_mem=shared)
        launch(); cp.cuda.Device().synchronize()
        ok = bool(cp.array_equal(data, expect))
        t = []
        for r in range(reps):
            s.record(); launch(); e.record(); e.synchronize(); t.append(cp.cuda.get_elapsed_time(s, e))
        ms = statistics.median(t)
        row.append(f"{ms:.3f} ms, {64 * n / ms / 1e9:.2f} TB/s" + ("" if ok else " WRONG"))
    other = cp.empty_like(src)
    t = []
    for r in range(reps):
        s.record(); other[...] = src; e.record(); e.synchronize(); t.append(cp.cuda.get_elapsed_time(s, e))
    ms = statistics.median(t)
    row.append(f"{ms:.3f} ms, {64 * n / ms / 1e9:.2f} TB/s")
    print(f"| {lg} | " + " | ".join(row) + " |", flush=True)
    del src, expect, data, other
    cp.get_default_memory_pool().free_all_blocks()
