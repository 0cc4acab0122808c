#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, on the loopback address, to test the workflow's SLURM profile
# (profiles/slurm) and dask-jobqueue against a real batch scheduler.
#
#   scripts/slurm_local.sh start     # install slurm-wlm and munge if missing (root, apt), configure, start
#   scripts/slurm_local.sh stop      # stop the daemons this script started (by their pid files)
#   scripts/slurm_local.sh status    # sinfo of the running cluster
#   scripts/slurm_local.sh env       # the line to paste: export SLURM_CONF=...
#
# Every file lives in one scratch folder ($BENCHSUITE_SLURM_DIR, default /tmp/benchsuite-slurm): slurm.conf,
# gres.conf, spool, state, logs, pid files and munge's socket; client commands find the cluster through
# SLURM_CONF=$DIR/slurm.conf. The node is called `benchnode` and offers this machine's cores, 80 % of its
# memory, and two fake GPUs (character devices made with mknod, GRES gpu:2, so that `--gpus` and `--gres` are
# scheduled and recorded without a GPU). Partitions: `cpu` (the default, 1 day) and `gpu` (6 hours); their
# limits are what profiles/slurm/partitions.yaml declares. Ports: $BENCHSUITE_SLURM_PORT (default 6817) for
# slurmctld and the next one for slurmd.
#
# Settings a container needs (linuxproc process tracking, no task plugin, no accounting) and the pitfall of
# the SLURM executor without accounting (it waits forever on a failing sacct; the profile asks squeue) are
# explained where they are set. Exit status: 0 when the cluster is up (start) or down (stop); 3 when SLURM
# cannot be installed here (not root, or no apt-get): callers skip on that status only.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"  # slurmctld, slurmd and munged live there; a CI environment may lack them

DIR=${BENCHSUITE_SLURM_DIR:-/tmp/benchsuite-slurm}
PORT=${BENCHSUITE_SLURM_PORT:-6817}
NODE=benchnode
CONF=$DIR/slurm.conf

say() { echo "slurm_local: $*" >&2; }

install_if_missing() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
      && command -v sbatch >/dev/null; then
    return 0
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    say "SLURM is not installed and cannot be installed here (needs root and apt-get: apt-get install slurm-wlm munge)"
    exit 3
  fi
  say "installing slurm-wlm and munge (apt-get) ..."
  local t0=$SECONDS
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq slurm-wlm munge >/dev/null
  say "installed in $((SECONDS - t0)) s"
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_config() {
  local cpus mem_mb
  cpus=$(nproc)
  # 80 % of the memory slurmd will find: a node that declares more than it has is drained at once
  mem_mb=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.8}' /proc/meminfo)
  mkdir -p "$DIR"/{spool,state,log,run,dev,munge}
  # two fake GPUs: gres.conf needs character devices (regular files are rejected); 1,3 is /dev/null's
  for i in 0 1; do
    [ -c "$DIR/dev/gpu$i" ] || { rm -f "$DIR/dev/gpu$i"; mknod "$DIR/dev/gpu$i" c 1 3; }
  done
  cat > "$DIR/gres.conf" <<EOF
AutoDetect=off
NodeName=$NODE Name=gpu File=$DIR/dev/gpu[0-1]
EOF
  cat > "$CONF" <<EOF
# written by benchsuite's scripts/slurm_local.sh: a one-node cluster on 127.0.0.1
ClusterName=benchsuite
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
# a container has no cgroup hierarchy to manage: track processes through /proc, bind no tasks
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# cores and memory as consumable resources; without DefMemPerCPU one job takes the whole node's memory
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
GresTypes=gpu
MailProg=/bin/true
ReturnToService=2
# finished jobs stay in squeue's memory 5 minutes: the SLURM executor reads their state there (no sacct)
MinJobAge=300
# scancel: SIGTERM, then SIGKILL after KillWait seconds (a run writes its partial file on SIGTERM)
KillWait=10
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MessageTimeout=20
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$(hostname -s) CPUs=$cpus RealMemory=$mem_mb Gres=gpu:2 State=UNKNOWN
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=1-00:00:00 State=UP
PartitionName=gpu Nodes=$NODE MaxTime=06:00:00 State=UP
EOF
}

start_munge() {
  if pid_alive "$DIR/munge/munged.pid" && [ -S "$DIR/munge/munge.socket" ]; then
    return 0
  fi
  [ -f /etc/munge/munge.key ] || { say "no /etc/munge/munge.key (the munge package creates it)"; exit 1; }
  # munged refuses a socket folder others may write to, and one they cannot enter (client commands, as
  # any user, must reach the socket); its own socket here keeps clear of a system munged
  chown munge:munge "$DIR/munge"
  chmod 0755 "$DIR" "$DIR/munge"
  runuser -u munge -- munged --socket="$DIR/munge/munge.socket" --pid-file="$DIR/munge/munged.pid" \
      --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed"
}

wait_for_node() {
  local deadline=$((SECONDS + 60)) state=""
  while [ $SECONDS -lt $deadline ]; do
    state=$(SLURM_CONF=$CONF sinfo -h -n "$NODE" -o %t 2>/dev/null | head -1 || true)
    case "$state" in
      idle|mix|alloc) return 0 ;;
      drain*|down*)  # a node left drained by an earlier configuration
        SLURM_CONF=$CONF scontrol update nodename="$NODE" state=resume 2>/dev/null || true ;;
    esac
    sleep 0.5
  done
  say "node $NODE did not become idle within 60 s (state: ${state:-none}); logs in $DIR/log"
  tail -n 20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
  exit 1
}

# Commands in a job do not all see SLURM_CONF: Snakemake's job step drops every SLURM_* variable before its
# `srun`. Where /etc/slurm/slurm.conf is absent, SLURM's commands also read /run/slurm/conf/slurm.conf (what a
# configless compute node's slurmd provides), so that is made a link to this cluster's folder.
link_config() {
  if [ -e /etc/slurm/slurm.conf ]; then
    say "/etc/slurm/slurm.conf exists: commands inside jobs read it, not $CONF; remove it or run this elsewhere"
    exit 1
  fi
  if [ -e /run/slurm/conf ] && [ "$(readlink /run/slurm/conf)" != "$DIR" ]; then
    say "/run/slurm/conf exists and is not this cluster's ($DIR); commands inside jobs would read it"
    exit 1
  fi
  mkdir -p /run/slurm
  ln -sfn "$DIR" /run/slurm/conf
}

start() {
  install_if_missing
  if [ "$(id -u)" != 0 ]; then
    say "starting slurmctld and slurmd needs root"
    exit 3
  fi
  write_config
  link_config
  start_munge
  export SLURM_CONF=$CONF
  local t0=$SECONDS
  pid_alive "$DIR/run/slurmctld.pid" || slurmctld -i -f "$CONF"
  pid_alive "$DIR/run/slurmd.pid" || slurmd -f "$CONF" -N "$NODE"
  wait_for_node
  say "cluster up in $((SECONDS - t0)) s: node $NODE, partitions cpu (default) and gpu, GRES gpu:2 (fake)"
  echo "export SLURM_CONF=$CONF"
}

stop_one() {
  local pidfile=$1 name=$2 pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { say "$name (pid $pid) ignored SIGTERM; killing it"; kill -9 "$pid"; }
  fi
  rm -f "$pidfile"
}

stop() {
  if [ -f "$CONF" ] && pid_alive "$DIR/run/slurmctld.pid"; then
    SLURM_CONF=$CONF scancel --state=PENDING,RUNNING --full 2>/dev/null || true  # jobs this cluster still runs
  fi
  stop_one "$DIR/run/slurmd.pid" slurmd
  stop_one "$DIR/run/slurmctld.pid" slurmctld
  stop_one "$DIR/munge/munged.pid" munged
  [ "$(readlink /run/slurm/conf 2>/dev/null)" != "$DIR" ] || rm -f /run/slurm/conf
  say "stopped (files kept in $DIR)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) SLURM_CONF=$CONF sinfo ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
