# Keeps only the named kernel entries of a PTX module (every other .entry is dropped; functions, globals and
# constants stay), so ptxas assembles a small cubin in seconds instead of the whole module.
# usage: python3 cut_ptx.py IN.ptx KERNEL[,KERNEL...] OUT.ptx
import re
import sys

src, keep, out = open(sys.argv[1]).read(), set(sys.argv[2].split(',')), sys.argv[3]
kept, skipping, depth, seen_body = [], False, 0, False
for line in src.split('\n'):
    m = re.match(r'^(?:\.visible )?\.entry (\w+)\(', line)
    if m and not skipping and m.group(1) not in keep:
        skipping, depth, seen_body = True, 0, False
        continue
    if skipping:
        depth += line.count('{') - line.count('}')
        seen_body = seen_body or '{' in line
        if seen_body and depth == 0:
            skipping = False
        continue
    kept.append(line)
open(out, 'w').write('\n'.join(kept))
