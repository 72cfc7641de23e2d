# Sourced by Benchmarks/run and Benchmarks/instructions: installs nginx-light from Debian's packages
# unless nginx is already there, and runs it as a plain process from a temporary prefix, on a free port
# on 127.0.0.1, serving a 2 KB JSON file and a TMDB-like 20-movie page (~10 KB), files put in
# www/transfer/ (with sendfile), and storing PUT bodies in www/upload/; the same files over HTTP/2 on TLS
# on a second port, for a certificate of localhost made by openssl. Sets `port`, `h2_port`, `h2_cert`,
# `prefix` and `nginx_pid`, and stops nginx by PID (and removes the prefix) when the sourcing script exits.
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    say "installing nginx-light"
    "$here/../Scripts/install-packages" nginx-light
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

# In memory where the system has it (/dev/shm), so that the transfers suite's large files measure the
# clients rather than the disk's write-back.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then prefix=$(mktemp -d -p /dev/shm); else prefix=$(mktemp -d); fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
h2_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
h2_cert="$prefix/cert.pem"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$prefix/key.pem" -out "$h2_cert" \
    -days 2 -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost" 2>/dev/null
chmod 644 "$prefix/key.pem" "$h2_cert"
mkdir -p "$prefix/www/upload" "$prefix/www/transfer" "$prefix/body" "$prefix/logs"
chmod 755 "$prefix" "$prefix/www" "$prefix/www/transfer"  # nginx workers run as an unprivileged user
chmod 777 "$prefix/www/upload" "$prefix/body"              # where they store uploads
python3 - "$prefix/www" <<'PY'
import json, sys
www = sys.argv[1]
entries = [{"id": i, "name": f"entry {i}", "score": i * 1.5, "active": i % 2 == 0} for i in range(22)]
small = {"id": 1, "name": "small payload", "entries": entries}
open(f"{www}/small.json", "w").write(json.dumps(small))
movies = [{"adult": False, "backdrop_path": f"/backdrop{i:03d}.jpg", "genre_ids": [18, 53, 35][: 1 + i % 3], "id": 550 + i,
           "original_language": "en", "original_title": f"Movie number {i}",
           "overview": "A ticking-time-bomb insomniac and a slippery soap salesman channel primal aggression into therapy.",
           "popularity": 61.4 + i, "poster_path": None if i % 7 == 0 else f"/poster{i:03d}.jpg",
           "release_date": f"19{70 + i}-10-15", "title": f"Movie number {i}", "video": False,
           "vote_average": 8.4 - i / 10, "vote_count": 27000 - i * 100} for i in range(20)]
page = {"dates": {"maximum": "2026-12-02", "minimum": "2026-10-21"}, "page": 1, "results": movies,
        "total_pages": 52, "total_results": 1031}
open(f"{www}/page.json", "w").write(json.dumps(page))
PY
cat > "$prefix/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $prefix/nginx.pid;
error_log $prefix/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 65;
    types { application/json json; }
    server {
        listen 127.0.0.1:$port;
        root $prefix/www;
        # The transfers suite: a large file served with sendfile, and uploads stored by PUT.
        location /transfer/ { sendfile on; }
        location /upload/ {
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 0;
            client_body_temp_path $prefix/body;
        }
    }
    # The http2 suite: the same files over HTTP/2 (nginx 1.22's syntax), up to 256 streams at once.
    server {
        listen 127.0.0.1:$h2_port ssl http2;
        ssl_certificate $h2_cert;
        ssl_certificate_key $prefix/key.pem;
        http2_max_concurrent_streams 256;
        root $prefix/www;
    }
}
CONF
"$nginx_bin" -p "$prefix" -c "$prefix/nginx.conf" &
nginx_pid=$!
stop() {
    kill "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
    rm -rf "$prefix"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for _ in $(seq 1 50); do
    if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' "http://127.0.0.1:$port/page.json" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
say "nginx (pid $nginx_pid) serves $(wc -c < "$prefix/www/small.json") B and $(wc -c < "$prefix/www/page.json") B JSON on 127.0.0.1:$port"

