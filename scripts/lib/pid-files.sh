# Sourced by scripts/{ironic,keystone,neutron}-standalone.sh: data dirs and pid files.

# The absolute path of a directory, made when missing.
abs_dir() { mkdir -p "$1" && (cd "$1" && pwd); }

# The pid a pid file holds (digits only), or a failure when it is empty or missing.
read_pid() {
  local f=$1
  [[ -s $f ]] || return 1
  local pid
  pid=$(tr -dc '0-9' <"$f")
  [[ -n $pid ]] || return 1
  echo "$pid"
}
