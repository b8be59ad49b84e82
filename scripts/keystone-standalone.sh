#!/usr/bin/env bash
# Starts and stops a real OpenStack Keystone (Debian 12's `keystone` package, Zed) for end-to-end tests: SQLite,
# served by uwsgi on a loopback port (no Apache), bootstrapped with keystone-manage. Facts behind every setting:
# shared/notes/openstack-lab.md (sections 3 and 6).
#
#   scripts/keystone-standalone.sh install
#   scripts/keystone-standalone.sh start DATA_DIR [--port N] [--admin-password P] [--token-expiration SECONDS]
#                                                 [--from SEED_DIR] [--timeout SECONDS]
#   scripts/keystone-standalone.sh stop DATA_DIR
#   scripts/keystone-standalone.sh status DATA_DIR
#   scripts/keystone-standalone.sh bootstrap SEED_DIR [--admin-password P]
#
# `start` bootstraps DATA_DIR on first use (database, fernet and credential keys, the admin user in project admin,
# region RegionOne, identity endpoints public+internal) — or, with --from, copies SEED_DIR, which `bootstrap` made
# once (the admin password is then SEED_DIR's) —, then makes sure of the roles `manager` (implying `member`, which
# implies `reader`) and `service`, the project `service`, and identity endpoints at its URL. It prints the v3 root
# (http://127.0.0.1:PORT/v3) as its last stdout line once GET /v3 answers 200, and writes the admin credentials to
# DATA_DIR/admin.json (mode 600) and a clouds.yaml (cloud `admin`) beside it. The admin password is
# --admin-password, else $KEYSTONE_ADMIN_PASSWORD, else the one already in DATA_DIR/admin.json, else random.
# --token-expiration: the lifetime of every token Keystone issues from this start on (default 3600 s).
# `stop` keeps DATA_DIR: `start` on it again resumes the same Keystone (users, projects, keys: earlier tokens stay
# valid), on any --port. Every file `start` writes goes under DATA_DIR; no system service is touched. Everything but
# the URL goes to stderr. Exit codes: 0 ok; 1 failure; 2 usage; `status` exits 3 when Keystone is not running.
#
# Measured on a 2-core Debian 12 machine (2026-11), quiet unless said; figures under load come from a load
# average of 7 (other test suites running):
#   install    17-20 s: keystone and 30 new dependencies, 4.4 MB (uwsgi and the openstack/baremetal CLIs are
#              already there with Ironic's packages); the lab notes measured 72 s on a slower mirror
#   bootstrap  ≈ 11 s (4 × keystone-manage: ≈ 1.5-2 s of Python start-up each; the two key setups run beside
#              db_sync)
#   start      new DATA_DIR: 7.6-11 s (15-19 s under load); --from SEED_DIR: 2.4-3.1 s (under load); the same
#              DATA_DIR again: 2.1-2.6 s. Of that, uwsgi until GET /v3 is 200 ≈ 2 s, roles/project/endpoints ≈ 0.3 s
#   stop       ≈ 1.1 s (SIGTERM; the uwsgi master buries its worker on its one-second cycle)
#   memory     ≈ 142 MiB PSS (master 8 MiB + worker 133 MiB)
set -euo pipefail

# Debian's interpreter: the python3 on PATH may be pyenv's, without Keystone's modules.
PY=/usr/bin/python3
PACKAGES=(keystone uwsgi-core uwsgi-plugin-python3 python3-openstackclient python3-ironicclient)
REQUIRED=(/usr/bin/keystone-manage /usr/bin/keystone-wsgi-public /usr/bin/uwsgi /usr/lib/uwsgi/plugins/python3_plugin.so)

log() { printf '[keystone-standalone] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
usage() { sed -n '6,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Keep pyenv's or a caller's Python settings out of Debian's Python (keystone-manage, the uwsgi plugin).
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP

# shellcheck source=lib/debian-packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-packages.sh"

# ---------------------------------------------------------------------------------------------------- install
cmd_install() {
  install_missing_packages || return 0
  # The keystone package is a WSGI app with no daemon of its own, but it registers a keystone service (uwsgi on port
  # 5000, /etc/keystone): if it started anyway, stop it.
  stop_packaged_service keystone
  all_binaries || die "missing after install: ${REQUIRED[*]}"
  log "installed"
}

# ---------------------------------------------------------------------------------------------------- helpers
# shellcheck source=lib/pid-files.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/pid-files.sh"

# Every uwsgi process (master and worker) of this data dir: they all carry its uwsgi.ini on their command line.
our_uwsgi_pids() {
  local ini=$1 pid
  for pid in $(pgrep -x uwsgi || true); do
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$ini" && echo "$pid"
  done
  return 0
}

is_our_keystone() {
  local pid=$1 ini=$2
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$ini"
}

http_code() {
  # Prints the HTTP status of GET URL (000 on connection failure).
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1" 2>/dev/null) || true
  echo "${code:-000}"
}

tail_logs() {
  local data=$1 f
  for f in "$data"/log/*.log; do
    [[ -s $f ]] || continue
    echo "---- $f" >&2
    tail -n 40 "$f" >&2
  done
}

# keystone-manage prints a harmless eventlet traceback at exit ("'NoneType' object has no attribute
# 'getcurrent'") with rc 0: judge by rc and keep its output in the log.
manage() {
  local data=$1
  shift
  /usr/bin/keystone-manage --config-file "$data/keystone.conf" "$@" >>"$data/log/keystone-manage.out" 2>&1 ||
    { tail -n 40 "$data/log/keystone-manage.out" >&2; die "keystone-manage $1 failed"; }
}

write_config() {
  local data=$1 port=$2 expiration=$3
  cat >"$data/keystone.conf" <<EOF
# Written by scripts/keystone-standalone.sh: do not edit, it is rewritten on every start.
[DEFAULT]
log_file = $data/log/keystone.log
use_stderr = false

[database]
connection = sqlite:///$data/keystone.db

[token]
provider = fernet
expiration = $expiration

[fernet_tokens]
key_repository = $data/fernet-keys

[fernet_receipts]
key_repository = $data/fernet-keys

[credential]
key_repository = $data/credential-keys

[identity]
# bcrypt cost 4 (the minimum): every password token pays it; test passwords need no key stretching.
password_hash_rounds = 4

[cache]
# Without a cache a token validation takes ≈ 200 ms; with it ≈ 20 ms (shared/notes/openstack-lab.md).
enabled = true
backend = dogpile.cache.memory

[oslo_concurrency]
lock_path = $data/lock
EOF

  # http-socket + Connection: close: keystoneauth/requests reuse a connection uwsgi already closed otherwise
  # (ConnectionResetError 104); http11-socket with one thread lets one idle keep-alive pin the only thread.
  # One process × one thread: SQLite gives "database is locked" (500) on concurrent writes.
  cat >"$data/uwsgi.ini" <<EOF
; Written by scripts/keystone-standalone.sh: do not edit, it is rewritten on every start.
[uwsgi]
plugins = python3
http-socket = 127.0.0.1:$port
add-header = Connection: close
wsgi-file = /usr/bin/keystone-wsgi-public
env = OS_KEYSTONE_CONFIG_FILES=$data/keystone.conf
master = true
processes = 1
threads = 1
lazy-apps = true
die-on-term = true
buffer-size = 65535
need-app = true
; The worker segfaults in Python's finalisation (greenlet, via eventlet) on SIGTERM, and the master waits
; ≈ 0.7 s to bury it: skip the teardown, nothing is left to flush (SQLite commits per request).
skip-atexit-teardown = true
logto = $data/log/uwsgi.log
pidfile = $data/keystone.pid
EOF
}

# The roles manager and service, the implied roles manager → member (→ reader), the project service, the
# identity endpoints at this URL. Zed's
# bootstrap makes only admin, member and reader (admin → member → reader): without manager → member, Ironic
# refuses a manager even a node list. Idempotent; Python's standard library only (one process, ≈ 0.3 s).
ensure_defaults() {
  local url=$1 admin_json=$2
  ADMIN_JSON=$admin_json KEYSTONE_URL=$url "$PY" -I - <<'PYEOF'
import json, os, sys, urllib.error, urllib.request

url = os.environ["KEYSTONE_URL"]
admin = json.load(open(os.environ["ADMIN_JSON"]))

def call(method, path, body=None, token=None, ok=(200, 201, 204)):
    req = urllib.request.Request(url + path, method=method,
                                 data=None if body is None else json.dumps(body).encode())
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("X-Auth-Token", token)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            data = res.read()
            return res.status, (json.loads(data) if data else None), res.headers
    except urllib.error.HTTPError as e:
        if e.code in ok:
            return e.code, None, e.headers
        raise SystemExit(f"{method} {path} -> {e.code}: {e.read()[:500]!r}")

_, _, headers = call("POST", "/auth/tokens", {"auth": {
    "identity": {"methods": ["password"], "password": {"user": {
        "name": admin["username"], "password": admin["password"], "domain": {"name": "Default"}}}},
    "scope": {"project": {"name": admin["project_name"], "domain": {"name": "Default"}}}}})
token = headers["X-Subject-Token"]

def role_id(name):
    _, body, _ = call("GET", f"/roles?name={name}", token=token)
    if body["roles"]:
        return body["roles"][0]["id"]
    _, body, _ = call("POST", "/roles", {"role": {"name": name}}, token=token)
    return body["role"]["id"]

ids = {name: role_id(name) for name in ("reader", "member", "manager", "service", "admin")}
for prior, implied in (("manager", "member"), ("member", "reader")):
    status, _, _ = call("HEAD", f"/roles/{ids[prior]}/implies/{ids[implied]}", token=token, ok=(200, 204, 404))
    if status == 404:
        call("PUT", f"/roles/{ids[prior]}/implies/{ids[implied]}", token=token)

# The identity endpoints follow the port (a copied or restarted data dir may have served on another one).
_, body, _ = call("GET", "/services?type=identity", token=token)
for service in body["services"]:
    _, eps, _ = call("GET", f"/endpoints?service_id={service['id']}", token=token)
    for ep in eps["endpoints"]:
        if ep["interface"] in ("public", "internal") and ep["url"] != url:
            call("PATCH", f"/endpoints/{ep['id']}", {"endpoint": {"url": url}}, token=token)

_, body, _ = call("GET", "/projects?name=service&domain_id=default", token=token)
if not body["projects"]:
    call("POST", "/projects", {"project": {"name": "service", "domain_id": "default",
                                           "description": "Service users (ironic, leasehold)"}}, token=token)
PYEOF
}

write_admin_files() {
  local data=$1 url=$2 password=$3
  (
    umask 077
    ADMIN_PW=$password KEYSTONE_URL=$url OUT=$data "$PY" -I - <<'PYEOF'
import json, os
url, pw, out = os.environ["KEYSTONE_URL"], os.environ["ADMIN_PW"], os.environ["OUT"]
admin = {"auth_url": url, "username": "admin", "password": pw, "project_name": "admin",
         "user_domain_name": "Default", "project_domain_name": "Default", "region_name": "RegionOne"}
with open(os.path.join(out, "admin.json"), "w") as f:
    json.dump(admin, f, indent=2)
    f.write("\n")
# clouds.yaml is a YAML superset of JSON: json.dumps keeps the password quoted whatever it contains.
with open(os.path.join(out, "clouds.yaml"), "w") as f:
    f.write("clouds:\n  admin:\n    auth:\n")
    for k in ("auth_url", "username", "password", "project_name", "user_domain_name", "project_domain_name"):
        f.write(f"      {k}: {json.dumps(admin[k])}\n")
    f.write(f"    region_name: RegionOne\n    identity_api_version: 3\n    interface: public\n")
PYEOF
  )
}

admin_password_in() {
  local f=$1/admin.json
  [[ -s $f ]] || return 1
  "$PY" -I -c 'import json,sys; print(json.load(open(sys.argv[1]))["password"])' "$f"
}

# --------------------------------------------------------------------------------------------------- bootstrap
new_password() { head -c 18 /dev/urandom | base64 | tr '+/' '-_'; }

# db_sync, the fernet and credential keys, and bootstrap (the admin user, project and role, region RegionOne,
# the identity service with public and internal endpoints at URL) into DATA_DIR, whose config is written.
bootstrap_data_dir() {
  local data=$1 url=$2 password=$3 t0=$SECONDS
  log "bootstrapping $data (db_sync, fernet_setup, credential_setup, bootstrap)"
  # The key setups write only their key directories: they run beside db_sync (each keystone-manage spends
  # ≈ 1.5 s starting Python: ≈ 5 s one after the other, ≈ 2.5 s side by side on 2 cores).
  manage "$data" fernet_setup --keystone-user root --keystone-group root &
  local fernet=$!
  manage "$data" credential_setup --keystone-user root --keystone-group root &
  local credential=$!
  manage "$data" db_sync
  wait "$fernet" || die "keystone-manage fernet_setup failed"
  wait "$credential" || die "keystone-manage credential_setup failed"
  # The password goes through the environment, not the command line (ps shows command lines).
  OS_BOOTSTRAP_PASSWORD=$password manage "$data" bootstrap \
    --bootstrap-username admin --bootstrap-project-name admin --bootstrap-role-name admin \
    --bootstrap-public-url "$url" --bootstrap-internal-url "$url" --bootstrap-region-id RegionOne
  : >"$data/bootstrapped"
  log "bootstrapped in $((SECONDS - t0)) s"
}

# `bootstrap SEED_DIR`: a bootstrapped data dir that is never served, for `start --from` to copy.
cmd_bootstrap() {
  [[ $# -ge 1 ]] || usage
  local data password=${KEYSTONE_ADMIN_PASSWORD:-}
  data=$(abs_dir "$1")
  shift
  while [[ $# -gt 0 ]]; do
    case $1 in
      --admin-password) password=${2:?}; shift 2 ;;
      *) log "unknown option $1"; usage ;;
    esac
  done
  all_binaries || die "Keystone is not installed: run '$0 install' first"
  [[ ! -e $data/bootstrapped ]] || die "$data is already bootstrapped"
  [[ -n $password ]] || password=$(new_password)
  mkdir -p "$data/log" "$data/lock" "$data/fernet-keys" "$data/credential-keys"
  chmod 700 "$data"
  write_config "$data" 5000 3600
  # `start` re-points the identity endpoints at its own port.
  bootstrap_data_dir "$data" "http://127.0.0.1:5000/v3" "$password"
  write_admin_files "$data" "http://127.0.0.1:5000/v3" "$password"
  rm -f "$data/uwsgi.ini"
}

# --------------------------------------------------------------------------------------------------- start
cmd_start() {
  [[ $# -ge 1 ]] || usage
  local data
  data=$(abs_dir "$1")
  shift
  local port=5000 password=${KEYSTONE_ADMIN_PASSWORD:-} timeout=60 expiration=3600 seed=""
  while [[ $# -gt 0 ]]; do
    case $1 in
      --port) port=${2:?}; shift 2 ;;
      --admin-password) password=${2:?}; shift 2 ;;
      --timeout) timeout=${2:?}; shift 2 ;;
      --token-expiration) expiration=${2:?}; shift 2 ;;
      --from) seed=${2:?}; shift 2 ;;
      *) log "unknown option $1"; usage ;;
    esac
  done
  [[ $port =~ ^[0-9]+$ ]] || die "bad --port $port"
  [[ $timeout =~ ^[0-9]+$ ]] || die "bad --timeout $timeout"
  [[ $expiration =~ ^[0-9]+$ ]] && ((expiration >= 1)) || die "bad --token-expiration $expiration"
  all_binaries || die "Keystone is not installed: run '$0 install' first"

  local ini=$data/uwsgi.ini pid
  if pid=$(read_pid "$data/keystone.pid") && is_our_keystone "$pid" "$ini"; then
    die "already running (pid $pid) for $data: stop it first"
  fi

  local url="http://127.0.0.1:$port/v3"
  # Refuse a port somebody else answers on (another Keystone, a packaged one on 5000).
  if [[ "$(http_code "http://127.0.0.1:$port/")" != 000 ]]; then
    die "port $port is already answering HTTP: pick --port"
  fi

  mkdir -p "$data/log" "$data/lock" "$data/fernet-keys" "$data/credential-keys"
  chmod 700 "$data"
  if [[ -n $seed && ! -e $data/bootstrapped ]]; then
    [[ -e $seed/bootstrapped && -s $seed/keystone.db ]] || die "--from $seed: not a data dir made by '$0 bootstrap'"
    # A copy of a bootstrapped database and its keys (≈ 0.6 MB): no keystone-manage at all.
    cp -a "$seed/keystone.db" "$seed/admin.json" "$data/"
    cp -a "$seed/fernet-keys/." "$data/fernet-keys/"
    cp -a "$seed/credential-keys/." "$data/credential-keys/"
    : >"$data/bootstrapped"
    log "copied the bootstrapped $seed"
  fi
  write_config "$data" "$port" "$expiration"

  if [[ ! -e $data/bootstrapped ]]; then
    [[ -n $password ]] || password=$(admin_password_in "$data" 2>/dev/null || true)
    [[ -n $password ]] || password=$(new_password)
    bootstrap_data_dir "$data" "$url" "$password"
  else
    local known
    known=$(admin_password_in "$data") || die "$data is bootstrapped but has no admin.json"
    if [[ -n $password && $password != "$known" ]]; then
      die "$data was bootstrapped with another admin password: omit --admin-password or use a new DATA_DIR"
    fi
    password=$known
  fi
  echo "$port" >"$data/port"
  echo "$url" >"$data/endpoint"
  write_admin_files "$data" "$url" "$password"

  rm -f "$data/keystone.pid"
  # setsid: its own session, so a terminal's Ctrl-C or the caller's process group does not reach it.
  setsid /usr/bin/uwsgi --ini "$ini" </dev/null >>"$data/log/uwsgi.stdout.log" 2>&1 &
  pid=$!
  echo "$pid" >"$data/keystone.pid"

  local deadline=$((SECONDS + timeout)) code
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "uwsgi (pid $pid) exited during start; log tail:"
      tail_logs "$data"
      rm -f "$data/keystone.pid"
      exit 1
    fi
    code=$(http_code "$url")
    [[ $code == 200 ]] && break
    if ((SECONDS >= deadline)); then
      log "GET $url did not answer 200 in ${timeout}s (last HTTP $code); log tail:"
      tail_logs "$data"
      stop_data_dir "$data"
      exit 1
    fi
    sleep 0.2
  done
  # uwsgi rewrites the pid file with the master's pid (the same process: setsid execs without forking here).
  ensure_defaults "$url" "$data/admin.json" || { tail_logs "$data"; stop_data_dir "$data"; die "creating the default roles failed"; }
  log "keystone up (pid $pid, data $data, admin credentials in $data/admin.json)"
  echo "$url"
}

# ---------------------------------------------------------------------------------------------------- stop
stop_data_dir() {
  local data=$1 ini=$1/uwsgi.ini pid="" pids p i
  if pid=$(read_pid "$data/keystone.pid") && is_our_keystone "$pid" "$ini"; then :; else pid=""; fi
  pids=$(our_uwsgi_pids "$ini")
  if [[ -z $pid && -z $pids ]]; then
    log "keystone not running for $data"
    rm -f "$data/keystone.pid"
    return 0
  fi
  # The master first (die-on-term takes its workers down); any orphaned worker of this data dir after it.
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    pids=$(our_uwsgi_pids "$ini")
    [[ -n $pids ]] || break
    ((i == 10)) && for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
    sleep 0.1
  done
  pids=$(our_uwsgi_pids "$ini")
  for p in $pids; do
    log "uwsgi pid $p still running after 10 s: SIGKILL"
    kill -KILL "$p" 2>/dev/null || true
  done
  log "keystone stopped${pid:+ (pid $pid)}"
  rm -f "$data/keystone.pid"
}

cmd_stop() {
  [[ $# -eq 1 ]] || usage
  [[ -d $1 ]] || die "no such data dir $1"
  stop_data_dir "$(cd "$1" && pwd)"
}

cmd_status() {
  [[ $# -eq 1 ]] || usage
  [[ -d $1 ]] || { echo "stopped"; exit 3; }
  local data pid
  data=$(cd "$1" && pwd)
  if pid=$(read_pid "$data/keystone.pid") && is_our_keystone "$pid" "$data/uwsgi.ini"; then
    echo "running pid=$pid url=$(cat "$data/endpoint" 2>/dev/null)"
  else
    echo "stopped"
    exit 3
  fi
}

[[ $# -ge 1 ]] || usage
command=$1
shift
case $command in
  install) cmd_install "$@" ;;
  bootstrap) cmd_bootstrap "$@" ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  status) cmd_status "$@" ;;
  -h | --help | help) usage ;;
  *) log "unknown command $command"; usage ;;
esac
