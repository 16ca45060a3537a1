#!/usr/bin/env bash
# Stops the one-node Slurm that .ci/slurm-up.sh started: slurmd, slurmctld, then munged, each by
# the process id it recorded (never by name).
set -uo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
state=/var/run/xattn-slurm
for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid" /run/munge/munged.pid; do
  [ -s "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  $SUDO kill "$pid" 2>/dev/null || continue
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  echo "slurm-down: stopped $(basename "$pidfile" .pid) ($pid)"
done
exit 0
