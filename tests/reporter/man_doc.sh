#!/usr/bin/env bash
# scopeprof(1) against the reporter's own help, so that the man page cannot
# lag: every command `scopeprof --help` lists has a section in
# packaging/scopeprof.1, every option `scopeprof help COMMAND` lists is named
# in that command's section, and an option a section names that the
# command's help does not list (renamed or removed) fails too. The
# environment's variables are checked against scopeprof(3) by
# tests/core/env_doc.sh. Reads the man source, its escapes taken out.
set -eu
BUILD=${BUILD:-build}
SP=${SP:-$BUILD/scopeprof}
work=$(mktemp -d /tmp/sp_man_doc.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$SP" --help >"$work/main"
for c in $(sed -n '/^commands:/,/^$/p' "$work/main" | awk 'NR > 1 && NF {print $1}'); do
  "$SP" help "$c" >"$work/help.$c"
done
python3 - "$work" packaging/scopeprof.1 <<'PY'
import glob, os, re, sys
work, man_path = sys.argv[1:]
OPT = re.compile(r"(?<![\w-])(--[a-z][a-z_-]*[a-z]|-o)(?![\w-])")
src = open(man_path, encoding="utf-8").read()
text = re.sub(r"\\f[BIRP]", "", src.replace("\\-", "-"))
# COMMANDS: a section per command, ".TP" then ".B name", up to the next one.
body = text[text.index(".SH COMMANDS"):text.index(".SH EXIT STATUS")]
parts = re.split(r"^\.TP\n\.B (\w+)\n", body, flags=re.M)
sections = {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}
fail = []
for path in sorted(glob.glob(f"{work}/help.*")):
    cmd = path.rsplit(".", 1)[1]
    if cmd not in sections:
        fail.append(f"no section for the command '{cmd}'")
        continue
    helped = set(OPT.findall(open(path).read())) - {"--help"}
    named = set(OPT.findall(sections[cmd]))
    for o in sorted(helped - named):
        fail.append(f"{cmd}: '{o}' is in `scopeprof help {cmd}` but not in its man page section")
    for o in sorted(named - helped):
        fail.append(f"{cmd}: the man page names '{o}', which `scopeprof help {cmd}` does not list")
    print(f"{cmd}: {len(helped)} option(s), all in scopeprof.1" if not helped - named else f"{cmd}: checked")
for o in ("--help", "-h", "--version"):
    if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", text[:text.index(".SH DESCRIPTION")]):
        fail.append(f"the synopsis lacks {o}")
for f in fail: print("FAILED:", f)
sys.exit(1 if fail else 0)
PY
echo "man_doc.sh: all passed"
