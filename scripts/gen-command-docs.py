#!/usr/bin/env python3
"""gen-command-docs.py - write server/commanddocs.json, the documentation
COMMAND DOCS replies for each Redis 7.0 command, from the command JSON
files of a Redis source tree (src/commands/*.json, the files Redis's own
utils/generate-command-code.py compiles into commands.c).

    scripts/gen-command-docs.py [REDIS_SRC] > server/commanddocs.json

REDIS_SRC defaults to /tmp/redis-src (the 7.0.15 tree of
../shared/tools/redis-suite.md). The output keeps what
addReplyCommandDocs (server.c) sends, transformed as the generator does:
command and argument names in lower case, tokens in upper case, a field
that is missing or empty left out, the group as COMMAND_GROUP_STR names it
("sorted_set" is "sorted-set"), quotes in a token dropped (C literal
concatenation), doc flags in lower case, an argument's
optional / multiple / multiple_token as its "flags". Subcommands are keyed
"container|name". Sentinel-only commands are left out.
"""
import glob
import json
import os
import sys

src = sys.argv[1] if len(sys.argv) > 1 else "/tmp/redis-src"
ARG_FLAGS = ["optional", "multiple", "multiple_token"]


def arg_doc(a):
    d = {"name": a["name"].lower(), "type": a["type"]}
    if "key_spec_index" in a:
        d["key_spec_index"] = a["key_spec_index"]
    for field, upper in (("token", True), ("summary", False), ("since", False), ("deprecated_since", False)):
        v = a.get(field)
        if v:
            d[field] = v.upper() if upper else v
    if "token" in d:
        # The generator writes the token as a C literal "%s": MIGRATE's
        # token "\"\"" becomes """", two empty literals, so Redis sends "".
        d["token"] = d["token"].replace('"', "")
    flags = [f for f in ARG_FLAGS if a.get(f)]
    if flags:
        d["flags"] = flags
    if a["type"] in ("oneof", "block"):
        d["arguments"] = [arg_doc(s) for s in a["arguments"]]
    return d


docs = {}
for path in sorted(glob.glob(os.path.join(src, "src", "commands", "*.json"))):
    with open(path) as f:
        for name, c in json.load(f).items():
            if "SENTINEL" in c.get("command_flags", []) and "ONLY_SENTINEL" in c.get("command_flags", []):
                continue
            if c.get("group") == "sentinel":
                continue
            key = name.lower()
            if c.get("container"):
                key = c["container"].lower() + "|" + key
            d = {}
            for field in ("summary", "since", "complexity", "deprecated_since", "replaced_by"):
                if c.get(field):
                    d[field] = c[field]
            d["group"] = c["group"].replace("_", "-")
            if c.get("doc_flags"):
                d["doc_flags"] = [f.lower() for f in c["doc_flags"]]
            if c.get("history"):
                d["history"] = [[h[0], h[1]] for h in c["history"]]
            if c.get("arguments"):
                d["arguments"] = [arg_doc(a) for a in c["arguments"]]
            docs[key] = d

json.dump(docs, sys.stdout, sort_keys=True, separators=(",", ":"))
sys.stdout.write("\n")
