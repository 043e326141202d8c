"""Every value of the old JSON document is in the new one, bit for bit (floats compared as
their shortest round-trip text); keys only the new one has are listed, not failed."""
import json
import sys


def walk(old, new, path, diffs, added):
    if isinstance(old, dict) and isinstance(new, dict):
        for k, v in old.items():
            if k not in new:
                diffs.append(f"{path}.{k}: missing in new")
            else:
                walk(v, new[k], f"{path}.{k}", diffs, added)
        for k in new:
            if k not in old:
                added.add(f"{path}.{k}")
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            diffs.append(f"{path}: {len(old)} items -> {len(new)}")
        for i, (a, b) in enumerate(zip(old, new)):
            walk(a, b, f"{path}[{i}]", diffs, added)
    elif type(old) is not type(new) or repr(old) != repr(new):
        diffs.append(f"{path}: {old!r} -> {new!r}")


def load(p):
    text = open(p).read()
    return json.loads(text) if text.strip() else None


old, new = load(sys.argv[1]), load(sys.argv[2])
diffs, added = [], set()
walk(old, new, "", diffs, added)
for a in sorted({a.split("[")[0] for a in added})[:20]:
    print(f"  added {a}")
for d in diffs[:20]:
    print(f"  {d}")
sys.exit(1 if diffs else 0)
