import sys

out = sys.stdout.buffer
for line in sys.stdin.buffer:
    out.write(line)
    out.flush()
