# A/B of batch_add_{g1,g2}_affine_level over sm_90 cubins, on the GPU host (cupy).
# usage: python3 affine_levels.py VARIANT[,VARIANT...] CURVE:LOG_N[,...] [REPS]    e.g. base,new g1:24,g2:22
#   $CUBINS/VARIANT.cubin (default ./cubins).
# Mirrors host/batch_add/mod.rs: one wave by the occupancy query (blocks of 64 threads, the staging shared memory),
# levels while every lane gets >= 16 pairs. Points are random canonical coordinates (not on the curve: the
# level's arithmetic does not care, and x values are distinct, so every pair takes the general path); the last
# level's output is compared bit for bit with the first variant's (a variant whose plan has another number of
# levels differs by construction); all levels of one sum are timed with CUDA events, median of REPS (5).
import sys, os, statistics
import cupy as cp
cubins = os.environ.get("CUBINS", "cubins")
variants = sys.argv[1].split(',')
jobs = [(c, int(s)) for c, s in (x.split(':') for x in sys.argv[2].split(','))]   # g1:24,g2:22
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
drv = cp.cuda.driver
sms = cp.cuda.Device().attributes['MultiProcessorCount']
mods = {v: cp.RawModule(path=f"{cubins}/{v}.cubin") for v in variants}
WORDS = {'g1': 24, 'g2': 48}          # u32 words per affine point
fill = cp.ElementwiseKernel('uint64 seed, uint32 words', 'raw uint32 out', '''
  unsigned long long x = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27; x *= 0x94D049BB133111EBull; x ^= x >> 33;
  unsigned int v = (unsigned int)x;
  if ((i % 12) == 11) v = v % 0x1a0111e9u;   // each Fq's top word below p's (0x1a0111ea): canonical
  out[i] = v;''', 'fill')

def func(v, c):
    f = mods[v].get_function(f"batch_add_{c}_affine_level")
    chunks = (2 * WORDS[c] * 4 // 16) | 1
    shared = 2 * 64 * chunks * 16
    f.max_dynamic_shared_size_bytes = shared
    f.preferred_shared_memory_carveout = 100
    per_sm = max(1, drv.occupancyMaxActiveBlocksPerMultiprocessor(f.kernel.ptr, 64, shared))
    return f, shared, per_sm

def plan(n, threads):
    runs = []
    while n // 2 >= threads * 16:
        runs.append(max(-(-(n // 2) // threads), 16))
        n = -(-n // 2)
    return runs

def run(f, shared, runs, planned, pts, count, bufs):
    src = pts
    for shift, r in enumerate(runs):
        dst = bufs[shift % 2]
        threads = -(-(planned[shift] // 2) // r)
        f((-(-threads // 64),), (64,), (src, count, cp.uint32(shift), dst), shared_mem=shared)
        src = dst
    return src

print("| points | " + " | ".join(variants) + " |")
print("|---|" + "---:|" * len(variants))
for c, lg in jobs:
    n = 1 << lg
    w = WORDS[c]
    pts = cp.empty(n * w, dtype=cp.uint32); fill(cp.uint64(77 + lg), cp.uint32(w), pts, size=n * w)
    count = cp.array([n], dtype=cp.uint32)
    bufs = [cp.zeros(-(-n // 2) * w, dtype=cp.uint32), cp.zeros(-(-n // 4) * w, dtype=cp.uint32)]
    info = {}
    ref = None; ok = {}
    for v in variants:
        f, shared, per_sm = func(v, c)
        runs = plan(n, sms * per_sm * 64)
        planned = [-(-n // (1 << s)) for s in range(len(runs))]
        info[v] = (f, shared, runs, planned, per_sm)
        out = run(f, shared, runs, planned, pts, count, bufs); cp.cuda.Device().synchronize()
        m = -(-n // (1 << len(runs)))
        res = out[: m * w].copy()
        if ref is None: ref = res; ok[v] = True
        else: ok[v] = bool(cp.array_equal(ref, res))
    times = {v: [] for v in variants}
    s, e = cp.cuda.Event(), cp.cuda.Event()
    for r in range(reps):
        for v in variants:
            f, shared, runs, planned, per_sm = info[v]
            s.record(); run(f, shared, runs, planned, pts, count, bufs); e.record(); e.synchronize()
            times[v].append(cp.cuda.get_elapsed_time(s, e))
    row = [f"{statistics.median(times[v]):.3f} ({info[v][4]}/SM, {len(info[v][2])} lv)" + ("" if ok[v] else " DIFFERS") for v in variants]
    print(f"| {c} 2^{lg} | " + " | ".join(row) + " |", flush=True)
    del pts, bufs, ref
    cp.get_default_memory_pool().free_all_blocks()
