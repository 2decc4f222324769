#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check droce-perf's JSON (-j): it parses, has a figure for every test asked
for, and its figures are sane: non-zero, percentiles in order (min <= p50 <=
p99 <= p99.9 <= max), bandwidth consistent with the message rate, a tag
test's protocol the one its size and the eager limit give (and a tag_bw
rendezvous figure's count of software rendezvous at most its messages).
Nothing about speed.

  perf_json_check.py LABEL FILE TESTS [--mode M] [--same-as OTHER_FILE]
                     [--header KEY=JSON ...]

TESTS: comma-separated names. --mode: the header's mode (embedded, client,
server). --header: a header field and its value, as JSON (slots=1,
td=true), each given. --same-as: the results must equal another file's (the server
prints the figures the client sent it). Exit 0 (and "ok: ..."), or 1.
"""
import json
import sys


def check(label, path, tests, mode=None, same_as=None, want_hdr=()):
    try:
        d = json.load(open(path))
    except (OSError, ValueError) as e:
        return [f"JSON does not parse: {e}"]
    bad = []
    hdr, res = d["droce_perf"], d["results"]
    if mode and hdr.get("mode") != mode:
        bad.append(f"mode {hdr.get('mode')}, want {mode}")
    for kv in want_hdr:
        k, v = kv.split("=", 1)
        if hdr.get(k) != json.loads(v):
            bad.append(f"header {k} {hdr.get(k)!r}, want {v}")
    got = sorted({r["test"] for r in res})
    if got != sorted(set(tests)):
        bad.append(f"tests {got}, want {sorted(set(tests))}")
    for r in res:
        what = f"{r['test']} {r['size']} B"
        if r["test"].startswith("tag_"):
            want = "rndv" if r["size"] > hdr["eager_limit"] else "eager"
            if r.get("tm") != want:
                bad.append(f"{what}: tm {r.get('tm')}, want {want}")
            if r["test"] == "tag_bw" and want == "rndv" and not 0 <= r.get("sw_rndv", -1) <= r["msgs"]:
                bad.append(f"{what}: sw_rndv {r.get('sw_rndv')} of {r['msgs']} messages")
        if "lat_us" in r:
            lat = r["lat_us"]
            seq = [lat["min"], lat["p50"], lat["p99"], lat["p99.9"], lat["max"]]
            if not (0 < seq[0] and all(a <= b for a, b in zip(seq, seq[1:]))):
                bad.append(f"{what}: percentiles {seq}")
            if r["iters"] < 1:
                bad.append(f"{what}: {r['iters']} iterations")
        else:
            mps, g, size = r["msg_rate_mps"], r["gbit_s"], r["size"]
            if not (mps > 0 and r["msgs"] > 0 and r["seconds"] > 0):
                bad.append(f"{what}: rate {mps}, {r['msgs']} msgs")
            elif size and abs(g - mps * size * 8 / 1e3) > 0.01 * g + 0.002:
                bad.append(f"{what}: {g} Gbit/s for {mps} M msg/s")
    if same_as:
        try:
            other = json.load(open(same_as))["results"]
        except (OSError, ValueError, KeyError) as e:
            return bad + [f"{same_as}: {e}"]
        if other != res:
            bad.append(f"results differ from {same_as}'s")
    return bad


def main():
    a = sys.argv[1:]
    if len(a) < 3:
        sys.exit(__doc__)
    label, path, tests = a[0], a[1], a[2].split(",")
    mode = a[a.index("--mode") + 1] if "--mode" in a else None
    same = a[a.index("--same-as") + 1] if "--same-as" in a else None
    want = [a[i + 1] for i, x in enumerate(a) if x == "--header"]
    bad = check(label, path, tests, mode, same, want)
    if bad:
        print(f"FAIL: {label}: " + "; ".join(bad))
        sys.exit(1)
    n = len(json.load(open(path))["results"])
    print(f"ok: {label}: {n} figures")


if __name__ == "__main__":
    main()
