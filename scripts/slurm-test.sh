#!/usr/bin/env bash
# Slurm test: jobs/cluster-frontier.slurm submitted with sbatch, as a user
# would, to a one-node Slurm cluster started here on localhost (Debian's
# Slurm and MUNGE), on a small job (losses to 60 tiles, Grundy values to 40)
# of 2 MPI processes. The job's tables must be byte-identical to one process's
# without MPI, and the script's `chomp verify` must pass.
#
# What it does: installs slurmd, slurmctld, slurm-client and munge if missing;
# creates a MUNGE key if none and starts munged if none answers; writes a
# slurm.conf for this host (its CPUs and memory from `slurmd -C`, free ports,
# every state, spool, log and pid file in a temporary directory); starts
# slurmctld and slurmd directly (no systemd) and waits until the node is idle;
# submits the job; waits for it (with a timeout) and prints its log if it
# fails; compares the tables; stops the daemons it started (munged too), even
# on failure. Rerunning is safe: an existing key and a running munged are
# used, and the Slurm daemons never touch /etc/slurm or the default ports.
#
# Launcher: `srun --mpi=pmi2` (the Slurm script's default) works with
# Debian 12's MPICH 4.0 (ch4:ucx) and Slurm 22.05: the processes find each
# other through Slurm's pmi2 plugin. LAUNCH=mpiexec scripts/slurm-test.sh
# tests the fallback (hydra reads the allocation and starts its proxies
# through srun).
#
# Usage: scripts/slurm-test.sh   (as root on Debian 12: it installs packages
# and starts daemons; see .ci/run). SOLO_BIN=PATH uses that build without MPI
# instead of building target/release/chomp.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
started=$(date +%s)
T=""
said=""
fail() { echo "FAILED: $*${T:+ (the logs are in $T)}"; said=1; exit 1; }
[ "$(id -u)" = 0 ] || fail "scripts/slurm-test.sh runs as root (it installs packages and starts munged, slurmctld, slurmd)"
LAUNCH=${LAUNCH:-srun}

# Every file of the cluster in one folder (under /tmp: slurmd puts its steps' sockets there, and a
# socket's path has at most 107 bytes); removed after a pass, kept after a failure.
T=$(mktemp -d /tmp/chomp-slurm.XXXXXX)
ctld_pid=""
slurmd_pid=""
munged_pid=""
job_id=""
cleanup() {
  local rc=$?
  if [ -n "$job_id" ]; then scancel "$job_id" 2>/dev/null || true; fi
  # The job's processes end with their step; give slurmd a moment to reap them.
  for _ in $(seq 1 20); do
    [ -n "$job_id" ] && squeue -h -j "$job_id" 2>/dev/null | grep -q . || break
    sleep 0.5
  done
  for pid in $slurmd_pid $ctld_pid $munged_pid; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in $slurmd_pid $ctld_pid $munged_pid; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  if [ "$rc" -eq 0 ]; then rm -rf "$T"; elif [ -z "$said" ]; then echo "FAILED: exit status $rc (the logs are in $T)"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'fail interrupted' INT TERM

# 1. Packages: Slurm, MUNGE, and MPICH for the MPI build.
missing=()
for p in slurmd slurmctld slurm-client munge mpich libmpich-dev libclang1-14; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # Their postinst scripts cannot start services here (no systemd; policy-rc.d): fine, they are started below.
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$T/apt.log" 2>&1; then
    tail -n 20 "$T/apt.log"
    fail "apt-get install ${missing[*]}"
  fi
fi

# The binaries, built the way scripts/mpi-tests.sh builds them (no-ops when
# up to date; niced: a build yields to whatever else runs on the machine).
nice -n 19 cargo build --release --locked --features mpi --target-dir target/mpi || fail "the MPI build"
MPI_BIN=$PWD/target/mpi/release/chomp
if [ -z "${SOLO_BIN:-}" ]; then
  nice -n 19 cargo build --release --locked || fail "the build without MPI"
  SOLO_BIN=$PWD/target/release/chomp
fi


# 2. MUNGE: a key (Debian's postinst makes one; a bare image may have none) and munged.
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key >/dev/null || fail "mungekey"
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
fi
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  install -d -o munge -g munge -m 755 /run/munge
  # In the foreground, as the munge user (setpriv execs: $! is munged itself).
  setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground >"$T/munged.out" 2>&1 &
  munged_pid=$!
  for _ in $(seq 1 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n 2>/dev/null | unmunge >/dev/null 2>&1 || { cat "$T/munged.out"; fail "munged does not answer"; }
fi

# 3. A one-node cluster on this host: its CPUs and memory as slurmd sees them.
node=$(hostname -s)
hw=$(slurmd -C | head -n 1)
case "$hw" in NodeName=*" CPUs="*" RealMemory="*) ;; *) fail "slurmd -C: $hw" ;; esac
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(*[x.getsockname()[1] for x in s])')
mkdir -p "$T/state" "$T/spool" "$T/out" "$T/scratch"
export SLURM_CONF=$T/slurm.conf
cat >"$SLURM_CONF" <<EOF
# A one-node test cluster (scripts/slurm-test.sh): root daemons, no cgroups.
ClusterName=chomptest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
# No systemd and no delegated cgroup v2 in a container: track processes by
# their parent chain, bind no CPUs, gather no accounting.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
$hw NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" -N "$node" >"$T/slurmd.out" 2>&1 &
slurmd_pid=$!
state=""
for _ in $(seq 1 120); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  kill -0 "$ctld_pid" 2>/dev/null && kill -0 "$slurmd_pid" 2>/dev/null || break
  sleep 0.5
done
if [ "$state" != idle ]; then
  tail -n 20 "$T"/slurmctld.out "$T"/slurmctld.log "$T"/slurmd.out "$T"/slurmd.log 2>/dev/null || true
  fail "the node $node is not idle after 60 s (state: ${state:-none})"
fi
echo "ok: one-node Slurm cluster up ($hw)"

# 4. The job, submitted as a user would: a job file of their own, its
# processes from sbatch's flags, BIN, OUT and SCRATCH from the environment.
# (A time limit above the script's --signal=USR1@900: with less, Slurm would
# ask the job to stop, and requeue it, at once.)
cat >"$T/job.toml" <<EOF
name = "slurm-test"
out = "out"
max_tiles = 60
grundy_max_tiles = 40
EOF
job_id=$(JOB=$T/job.toml BIN=$MPI_BIN OUT=$T/out/tables SCRATCH=$T/scratch LAUNCH=$LAUNCH \
  sbatch --parsable --job-name=chomp-slurm-test --nodes=1 --ntasks=2 --ntasks-per-node=2 \
  --cpus-per-task=1 --mem=1G --time=30 --output="$T/job-%j.log" jobs/cluster-frontier.slurm) ||
  fail "sbatch refused jobs/cluster-frontier.slurm"
job_id=${job_id%%;*}
log=$T/job-$job_id.log
# Polled (no accounting database here for sacct), for at most 5 minutes.
job_state=""
submitted=$(date +%s)
while [ $(($(date +%s) - submitted)) -lt 300 ]; do
  job_state=$(scontrol show job -o "$job_id" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true)
  case "$job_state" in PENDING | CONFIGURING | RUNNING | COMPLETING | "") sleep 0.5 ;; *) break ;; esac
done
exit_code=$(scontrol show job -o "$job_id" 2>/dev/null | grep -o ' ExitCode=[0-9:]*' | cut -d= -f2 || true)
if [ "$job_state" != COMPLETED ]; then
  echo "--- $log"
  cat "$log" 2>/dev/null || true
  echo "--- $T/slurmd.log"
  tail -n 20 "$T/slurmd.log" 2>/dev/null || true
  case "$job_state" in
    PENDING | CONFIGURING | RUNNING | COMPLETING | "") fail "job $job_id (LAUNCH=$LAUNCH): not done after $(($(date +%s) - submitted)) s (${job_state:-no state})" ;;
    *) fail "job $job_id (LAUNCH=$LAUNCH): $job_state after $(($(date +%s) - submitted)) s, exit code $exit_code" ;;
  esac
fi
job_id_done=$job_id
job_id=""
echo "ok: job $job_id_done ($LAUNCH, 2 processes) completed"

# 5. The same bytes as one process without MPI, and the job's verify passed.
RAYON_NUM_THREADS=1 "$SOLO_BIN" run "$T/job.toml" --out "$T/solo" --quiet || fail "the single process run"
digest() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16); }
want=$(digest "$T/solo")
got=$(digest "$T/out/tables")
# Two processes of one MPI job (not two single-process runs): process 0 and 1 report.
processes=$(grep -c "^process [01] (node 0)" "$log" || true)
if [ "$got" != "$want" ]; then
  cat "$log"
  fail "the Slurm job's tables differ from one process's: $got != $want"
fi
[ "$processes" = 2 ] || { cat "$log"; fail "the job log shows $processes of processes 0 and 1 of one MPI job"; }
grep -q "^ok: .* 0 problems" "$log" || { cat "$log"; fail "no passing chomp verify in the job log"; }
grep -h -e "^balance" -e "^ok: .* 0 problems" "$log"
echo "ok: the Slurm job's tables are identical to one process's ($got)"
echo "slurm test: passed in $(($(date +%s) - started)) s"
