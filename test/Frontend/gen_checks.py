#!/usr/bin/env python3
"""Appends CHECK lines for the diagnostics tilec prints on a test file.
Maintainer aid, not run by lit: review the output before keeping it."""
import re, subprocess, sys
path, args = sys.argv[1], sys.argv[2:]
name = path.split('/')[-1]
out = subprocess.run(['tilec', path] + args, capture_output=True, text=True).stderr.splitlines()
lines, first = [], True
i = 0
while i < len(out):
    m = re.match(r'^.*?' + re.escape(name) + r':(\d+):(\d+): (error|warning|note): (.*)$', out[i])
    if m:
        kind = 'CHECK' if first or m.group(3) != 'note' else 'CHECK-NEXT'
        lines.append(f'// {kind}: {{{{.*}}}}{name}:{m.group(1)}:{m.group(2)}: {m.group(3)}: {m.group(4)}')
        src = out[i + 1].replace('{{', '{{[{][{]}}')
        lines.append(f'// CHECK-NEXT: {{{{^}}}}{src}{{{{$}}}}')
        lines.append(f'// CHECK-NEXT: {{{{^}}}}{out[i + 2]}{{{{$}}}}')
        first = False
        i += 3
        continue
    i += 1
open(path, 'a').write('\n'.join(lines) + '\n')
