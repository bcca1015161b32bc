#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for the `slurm` tests (docs/pipeline.md):
# munge, MariaDB + slurmdbd (accounting, so `sacct` answers the executor plugin),
# slurmctld and slurmd; one partition `e2store` with this machine's CPUs, one account
# `e2store`. Idempotent: what already runs is left running.
#
#   bash tests/cluster/start-slurm.sh          # install (Debian packages) and start
#   bash tests/cluster/start-slurm.sh stop     # stop every daemon it started
#
# Needs root and Debian's package index. Prints what it started; exits non-zero with a
# one-line reason when it cannot.
set -euo pipefail

CLUSTER=e2store
ACCOUNT=e2store
PARTITION=e2store
DB_PASS=e2store-slurmdbd
HOST="$(hostname -s)"
CPUS="$(nproc)"
MEM_MB="$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)"
LOG=/var/log/e2store-slurm

die() { echo "start-slurm: $*" >&2; exit 2; }
running() { pgrep -x "$1" > /dev/null; }
say() { echo "start-slurm: $*"; }

[ "$(id -u)" -eq 0 ] || die "needs root (it installs Debian packages and starts daemons)"

stop() {
    for d in slurmd slurmctld slurmdbd; do
        if running "$d"; then pkill -x "$d" && say "stopped $d"; fi
    done
    if running mariadbd; then mysqladmin shutdown 2> /dev/null && say "stopped mariadb"; fi
    if running munged; then pkill -x munged && say "stopped munged"; fi
    for _ in $(seq 50); do
        running slurmd || running slurmctld || running slurmdbd || running mariadbd \
            || running munged || return 0
        sleep 0.2
    done
    die "a daemon did not stop in 10 s"
}

if [ "${1:-start}" = stop ]; then
    stop
    exit 0
fi

need=()
for cmd in sbatch slurmctld slurmd slurmdbd munged mariadbd; do
    command -v "$cmd" > /dev/null || need+=("$cmd")
done
if [ "${#need[@]}" -gt 0 ]; then
    say "installing slurm-wlm, slurmdbd, munge, mariadb-server (missing: ${need[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q slurm-wlm slurmdbd munge mariadb-server > /tmp/start-slurm-apt.log 2>&1 \
        || { apt-get update -q > /dev/null 2>&1 && apt-get install -y -q slurm-wlm slurmdbd munge \
             mariadb-server > /tmp/start-slurm-apt.log 2>&1; } \
        || die "apt-get install failed (no package index?): see /tmp/start-slurm-apt.log"
fi
mkdir -p "$LOG" /var/spool/slurmctld /var/spool/slurmd /run/munge /run/mysqld /var/run/slurm
chown slurm:slurm /var/spool/slurmctld "$LOG" /var/run/slurm
chown munge:munge /run/munge
chown mysql:mysql /run/mysqld

# munge: the shared key authenticates every daemon and command
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=128 status=none
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
fi
if ! running munged; then
    runuser -u munge -- munged && say "started munged"
fi

# MariaDB: the accounting database slurmdbd writes
if ! running mariadbd; then
    [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql > /dev/null
    (mariadbd --user=mysql --skip-networking=0 --bind-address=127.0.0.1 \
        > "$LOG/mariadb.log" 2>&1 &)
    for _ in $(seq 100); do mysqladmin ping > /dev/null 2>&1 && break; sleep 0.2; done
    mysqladmin ping > /dev/null 2>&1 || die "mariadb did not start: see $LOG/mariadb.log"
    say "started mariadb"
fi
mysql -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
          CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
          GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"

cat > /etc/slurm/slurmdbd.conf <<EOF
# written by tests/cluster/start-slurm.sh
AuthType=auth/munge
DbdHost=localhost
SlurmUser=slurm
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
LogFile=$LOG/slurmdbd.log
PidFile=/var/run/slurm/slurmdbd.pid
EOF
chown slurm:slurm /etc/slurm/slurmdbd.conf && chmod 600 /etc/slurm/slurmdbd.conf

cat > /etc/slurm/slurm.conf <<EOF
# written by tests/cluster/start-slurm.sh: one node, one partition, accounting on
ClusterName=$CLUSTER
SlurmctldHost=$HOST
AuthType=auth/munge
SlurmUser=slurm
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/var/run/slurm/slurmctld.pid
SlurmdPidFile=/var/run/slurm/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageEnforce=associations
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
MpiDefault=none
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=300
NodeName=$HOST CPUs=$CPUS Sockets=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=$MEM_MB State=UNKNOWN
PartitionName=$PARTITION Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
rm -f /etc/slurm/cgroup.conf  # slurmd picks the cgroup plugin the machine has

if ! running slurmdbd; then
    slurmdbd && say "started slurmdbd"
    for _ in $(seq 100); do sacctmgr -n show cluster > /dev/null 2>&1 && break; sleep 0.2; done
fi
sacctmgr -n show cluster > /dev/null 2>&1 || die "slurmdbd does not answer: see $LOG/slurmdbd.log"
sacctmgr -i -Q add cluster "$CLUSTER" > /dev/null 2>&1 || true
sacctmgr -i -Q add account "$ACCOUNT" cluster="$CLUSTER" \
    description="e2store tests" organization=e2store > /dev/null 2>&1 || true
sacctmgr -i -Q add user root account="$ACCOUNT" cluster="$CLUSTER" > /dev/null 2>&1 || true

if running slurmctld; then
    scontrol reconfigure > /dev/null 2>&1 || true
else
    slurmctld || die "slurmctld did not start: see $LOG/slurmctld.log"
    say "started slurmctld"
fi
if ! running slurmd; then
    slurmd || die "slurmd did not start: see $LOG/slurmd.log"
    say "started slurmd"
fi
for _ in $(seq 150); do
    state="$(sinfo -h -n "$HOST" -o %T 2> /dev/null || true)"
    case "$state" in idle*|mix*|alloc*) break ;; esac
    sleep 0.2
done
case "$state" in
    idle*|mix*|alloc*) ;;
    *) die "node $HOST is '${state:-unknown}', not idle: see $LOG/slurmctld.log and slurmd.log" ;;
esac
say "cluster $CLUSTER up: node $HOST ($CPUS CPUs, $MEM_MB MB), partition $PARTITION," \
    "account $ACCOUNT; logs in $LOG"
