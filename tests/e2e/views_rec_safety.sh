#!/usr/bin/env bash
# views.rec as an attacker and a damaged disk leave it (issue 46, findings 2, 3, 4, 7, 11), with
# real runs of `attnlab train` and real files: records of another model or another run are
# refused by name, a file is read in place (bounded memory, 1 GiB cap), one damaged byte hides
# only its record, a resume never drops a valid record (damaged bytes and superseded records are
# moved beside the file and the run says so), and --steps cannot overflow.
# usage: views_rec_safety.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
export ATTNLAB_PROGRESS=lines

tiny_config dot.json 200 50 5
sed 's/"heads": 2, "layers": 1/"heads": 4, "layers": 2/; s/"length": 4/"length": 6/' dot.json >wide.json
# Without the recorded attribution (train.record_attribution), so a record holds one "heads" and
# one "layers" of its own to patch below, and the damaged record's size is the one stated there;
# tests/core/test_recorded_attribution.cpp refuses damaged and oversized attribution tables.
"$bin" train --config dot.json --out dot -q --set train.record_attribution=false >/dev/null 2>&1 ||
  fatal "train dot failed"
"$bin" train --config wide.json --out wide -q >/dev/null 2>&1 || fatal "train wide failed"
steps=$("$bin" export --run dot --list-steps --json)
[ "$steps" = '{"steps":[0,50,100,150,200]}' ] && ok "a run lists its recorded steps" || fatal "steps: $steps"

# rc_of CMD...: runs the command, keeps stderr in err.txt, prints its exit status.
rc_of() { local rc=0; "$@" >out.txt 2>err.txt || rc=$?; echo $rc; }
# peak_mib CMD...: the command's peak RSS in MiB (its exit status ignored).
peak_mib() {
  python3 - "$@" <<'P'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
P
}
# record_offsets FILE: the offsets of the record magics ("VREC") in FILE, one per line.
record_offsets() {
  python3 -c 'import re,sys; [print(m.start()) for m in re.finditer(b"VREC", open(sys.argv[1],"rb").read())]' "$1"
}
# patch_record FILE N OLD NEW: replaces the CBOR bytes OLD (hex) by NEW in the Nth record
# (0-based) and writes the length and the version-2 CRC (of length, step and payload) anew: a
# record attnlab's reader must judge by its content, not by a broken checksum.
patch_record() {
  python3 - "$@" <<'P'
import struct, sys, zlib
path, n, old, new = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3]), bytes.fromhex(sys.argv[4])
b = open(path, "rb").read()
at = 11 + 4 + struct.unpack_from("<I", b, 11)[0] + 4  # after the file header
for _ in range(n):
    at += 20 + struct.unpack_from("<I", b, at + 4)[0]
size, step = struct.unpack_from("<Iq", b, at + 4)
payload = b[at + 20:at + 20 + size]
# The record's own key, not its importance table's: the keys are sorted, so "heads" comes first
# and "layers" last.
where = payload.find(old) if old.startswith(b"eheads") else payload.rfind(old)
assert where >= 0, old
payload = payload[:where] + new + payload[where + len(old):]
fields = struct.pack("<Iq", len(payload), step)
crc = zlib.crc32(payload, zlib.crc32(fields))
rec = struct.pack("<IIqI", 0x43455256, len(payload), step, crc) + payload
open(path, "wb").write(b[:at] + rec + b[at + 20 + size:])
P
}

# --- finding 2: a record's claimed sizes against the run's config ---------------------------
cp -r dot huge
# "layers": 1 -> 100000 and "heads": 2 -> 100000 (CBOR uint32), valid CRCs.
patch_record huge/views.rec 2 666c617965727301 666c61796572731a000186a0
patch_record huge/views.rec 2 65686561647302 6568656164731a000186a0
rc=$(rc_of "$bin" export --run huge --figure attention --step 100 --out huge.pdf)
[ "$rc" = 2 ] && grep -q "huge/views.rec: the record at step 100 states 100000 layers; the run's model has 1 (model.layers)" err.txt &&
  [ ! -e huge.pdf ] && ok "a record claiming 100,000 layers is refused by name (exit 2), no file" ||
  bad "100,000 layers: exit $rc, $(cat err.txt)"
mib=$(peak_mib "$bin" export --run huge --figure attention --step 100 --out huge.pdf)
[ "$mib" -lt 1000 ] && ok "  ... refused at $mib MiB peak (19.5 GB before)" || bad "refusing 100,000 layers took $mib MiB"
cp -r dot neg
patch_record neg/views.rec 1 666c617965727301 666c617965727320  # layers -1
rc=$(rc_of "$bin" export --run neg --figure attention --step 50 --out neg.pdf)
[ "$rc" = 2 ] && grep -q "the record at step 50 states -1 layers; the run's model has 1 (model.layers)" err.txt &&
  ! grep -q "(0..-2)" err.txt && ok "layers -1 is named as such (not '(0..-2)')" || bad "layers -1: exit $rc, $(cat err.txt)"

# The file cap and memory: a recording read in place. 900 MiB of zeros after the records (a
# sparse hole: damaged bytes the reader searches through) is listed within a small peak.
cp -r dot big
truncate -s 900M big/views.rec
steps=$("$bin" export --run big --list-steps --json 2>err.txt)
mib=$(peak_mib "$bin" export --run big --list-steps)
[ "$steps" = '{"steps":[0,50,100,150,200]}' ] && [ "$mib" -lt 200 ] &&
  ok "--list-steps of a 900 MiB views.rec: every record, $mib MiB peak (the file was read twice whole before)" ||
  bad "900 MiB views.rec: $steps, $mib MiB, $(cat err.txt)"
truncate -s 1025M big/views.rec
rc=$(rc_of "$bin" export --run big --list-steps)
[ "$rc" = 2 ] && grep -q "is 1074790400 bytes, over attnlab's limit of 1 GiB for a view recording" err.txt &&
  ok "a views.rec over 1 GiB is refused by name (exit 2)" || bad "1025 MiB: exit $rc, $(cat err.txt)"

# --- finding 3: another run's recording -------------------------------------------------------
cp -r dot mixed
cp wide/views.rec mixed/views.rec
wide_id=$(python3 -c 'import json; print(json.load(open("wide/.attnlab-run"))["run_id"])')
dot_id=$(python3 -c 'import json; print(json.load(open("dot/.attnlab-run"))["run_id"])')
for args in "--list-steps" "--figure attention --step 50 --out m.pdf"; do
  rc=$(rc_of "$bin" export --run mixed $args)
  [ "$rc" = 2 ] && grep -q "mixed/views.rec was recorded by another run ($work/wide, run id $wide_id) than mixed (run id $dot_id)" err.txt &&
    ok "export $args: another run's views.rec is refused naming both runs" || bad "export $args of a copied views.rec: exit $rc, $(cat err.txt)"
done
before=$(md5sum mixed/views.rec mixed/config.json mixed/metrics.csv mixed/summary.json)
rc=$(rc_of "$bin" train --resume mixed --steps 250 -q)
[ "$rc" = 2 ] && grep -q "was recorded by another run" err.txt &&
  [ "$(md5sum mixed/views.rec mixed/config.json mixed/metrics.csv mixed/summary.json)" = "$before" ] &&
  ok "train --resume refuses another run's views.rec and changes nothing" || bad "resume over a copied views.rec: exit $rc, $(cat err.txt)"

# --- finding 4: one damaged byte ----------------------------------------------------------------
cp -r dot flip
second=$(record_offsets flip/views.rec | sed -n 2p)
printf '\x00' | dd of=flip/views.rec bs=1 seek=$((second + 40)) conv=notrunc status=none
good=$(python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); print(len(b))' flip/views.rec)
steps=$("$bin" export --run flip --list-steps --json)
[ "$steps" = '{"steps":[0,100,150,200]}' ] && ok "a damaged byte in record 2 hides record 2 only" || bad "after one damaged byte: $steps"
rc=$(rc_of "$bin" train --resume flip --steps 250)
steps=$("$bin" export --run flip --list-steps --json)
[ "$rc" = 0 ] && [ "$steps" = '{"steps":[0,100,150,200,250]}' ] && [ -s flip/views.rec.damaged-1 ] &&
  grep -q "flip/views.rec: 771 bytes that are no valid record (damaged, after the record at step 0) moved to views.rec.damaged-1" err.txt &&
  ok "train --resume keeps every valid record, moves the damaged bytes to views.rec.damaged-1 and says so" ||
  bad "resume after a damaged byte: exit $rc, steps $steps, $(ls flip), $(cat err.txt)"
# A resume from an earlier checkpoint: records past it are moved aside, not deleted.
cp -r dot early
"$bin" train --config dot.json --out early --force --until 100 -q >/dev/null 2>&1
cp dot/views.rec early/views.rec.keep
python3 - early <<'P'
# the checkpoint at 100, the recording up to 200 (a run killed after recording, before saving)
import shutil, sys
shutil.move(sys.argv[1] + "/views.rec.keep", sys.argv[1] + "/views.rec")
P
# (the copied recording is dot's, whose identity early keeps: cp -r made early a copy of dot)
rc=$(rc_of "$bin" train --resume early --steps 200)
aside=$("$bin" export --run early --list-steps --json 2>/dev/null)
[ "$rc" = 0 ] && [ -s early/views.rec.superseded-1 ] &&
  grep -q "early/views.rec: the records at steps 150 to 200 (after the checkpoint's step 101" err.txt &&
  [ "$aside" = '{"steps":[0,50,100,150,200]}' ] &&
  ok "a resume from step 100 moves the records at 150 and 200 to views.rec.superseded-1 and records them again" ||
  bad "resume from an earlier checkpoint: exit $rc, $aside, $(ls early), $(cat err.txt)"

# --- finding 7 and 11: --steps ----------------------------------------------------------------
rc=$(rc_of "$bin" export --run dot --figure attention --steps 0:9223372036854775807:9223372036854775807 --out s.pdf)
[ "$rc" = 2 ] && grep -q -- "--steps 0:9223372036854775807:9223372036854775807: it ends past the run's last step, 200" err.txt &&
  [ ! -e s.pdf ] && ok "--steps 0:INT64_MAX:INT64_MAX: exit 2 naming --steps" || bad "--steps overflow: exit $rc, $(cat err.txt)"
rc=$(rc_of "$bin" export --run dot --figure attention --steps 0:9223372036854775807:1 --out s.pdf)
[ "$rc" = 2 ] && grep -q -- "--steps 0:9223372036854775807:1:" err.txt && ok "--steps of INT64_MAX steps: exit 2" || bad "--steps 0:MAX:1: exit $rc, $(cat err.txt)"
sed 's/"eval_batches": 1}/"eval_batches": 1, "record_every": 0}/' dot.json >norec.json
"$bin" train --config norec.json --out norec -q >/dev/null 2>&1
rc=$(rc_of "$bin" export --run norec --figure attention --steps 0:60:20 --out s.pdf)
[ "$rc" = 2 ] && grep -q -- "--steps 0:60:20: $work/norec\|--steps 0:60:20: norec has no recorded views" err.txt &&
  ! grep -q -- "--step 0" err.txt && ok "--steps 0:60:20 on a run without recordings names --steps, not --step 0" ||
  bad "--steps without records: exit $rc, $(cat err.txt)"
finish
