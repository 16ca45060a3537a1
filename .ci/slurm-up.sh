#!/usr/bin/env bash
# Brings up a real one-node Slurm on this machine for the Slurm sweep tests (notes: the shared
# notes/slurm-on-one-machine.md): installs slurm-wlm and munge if missing, writes a munge key and
# slurm.conf, starts munged, slurmctld and slurmd, waits until sinfo shows the node idle.
# Idempotent: daemons already running are kept. Needs root (or sudo). Stop with .ci/slurm-down.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

.ci/install-deps.sh slurm-wlm munge

host=$(hostname -s)
cpus=$(nproc)
state=/var/run/xattn-slurm   # the daemons' pid files, for slurm-down.sh
$SUDO mkdir -p "$state" /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge

# munge: a key owned by munge, mode 0400 in a 0700 folder; the daemon runs as munge.
if [ ! -s /etc/munge/munge.key ]; then
  $SUDO mkdir -p /etc/munge
  $SUDO dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
$SUDO chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
$SUDO chmod 0700 /etc/munge
$SUDO chmod 0400 /etc/munge/munge.key
if ! pgrep -u munge -x munged >/dev/null; then
  $SUDO -u munge /usr/sbin/munged 2>/dev/null || $SUDO runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 50); do munge -n | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
munge -n | unmunge | grep -q Success

conf=/etc/slurm/slurm.conf
want=$(cat <<CONF
# Written by xattn .ci/slurm-up.sh: one node on localhost, no cgroups, no accounting.
ClusterName=xattn-ci
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
MaxArraySize=10001
MinJobAge=600
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
)
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
  echo "$want" | $SUDO tee "$conf" >/dev/null
fi

pgrep -x slurmctld >/dev/null || $SUDO slurmctld
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
pgrep -x slurmd >/dev/null || $SUDO slurmd
for _ in $(seq 150); do
  if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
    echo "slurm-up: node $host idle ($cpus CPUs)"
    exit 0
  fi
  # A node left down by an earlier run comes back.
  $SUDO scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
  sleep 0.2
done
echo "slurm-up: the node did not become idle; sinfo says:" >&2
sinfo >&2 || true
tail -20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
