#!/usr/bin/env python3
"""A stand-in for the Hugging Face Hub on 127.0.0.1, for tests/pull.sh.

Usage: hf_server.py ROOT LOG

ROOT/USER/REPO/... are the repositories' files.  Prints the port it listens
on (chosen by the system), then serves:

  GET /api/models/U/R/tree/main[/DIR]  the listing (X-Repo-Commit header),
                                  of DIR when given, recursive when asked
                                  (?recursive=true), in pages of 4 linked
                                  by an absolute Link: rel="next"
  GET /api/models/U/R             {"sha": ...}
  GET /U/R/resolve/main/FILE      302 to /cdn/U/R/FILE, as the Hub does
  GET /cdn/U/R/FILE               the bytes, with Range (206) support

Fault modes, chosen by the repository's name:
  gated    401 without "Authorization: Bearer test-token", 403 with another
  drop     the first request for a file without a Range is cut off half-way
  badsum   the listing's sha256 is not the file's
  noref    no X-Repo-Commit: the revision comes from /api/models/U/R
  norange  Range requests are answered 200 with the whole file
  nolfs    the GGUF files are plain git files (no "lfs": a git blob id)
  evil     the listing names paths outside the repository and bad ids
  badjson  the listing is not JSON
  long     the file is longer than the listing says
  slow     files are sent in 32 KiB pieces, 50 ms apart
  stall    the listing is answered only after 30 s (a Hub that hangs)
  flat     ?recursive=true is ignored: one level, folders as "directory"
  deaf     like flat, and a folder's listing is the top level's again
  loop     the resolve redirects to itself, for ever
  far      the resolve redirects to the bytes on another port (the token
           must not follow); gated like gated
  gone     the resolve is a bare 404 (no X-Error-Code): the file went away
  portal   the file is answered 200 with a small HTML page (a captive portal)
  skew     like drop, then a Range is answered 206 from 7 bytes further on
  norev    the listing is 404 RevisionNotFound, with the Hub's JSON error
  overlap  each page of the listing repeats the last entry of the one before
  chunky   the file is sent chunked (no Content-Length), and the listing
           says it is 100 bytes longer than it is
  headref  no X-Repo-Commit on the listing and no model page: the commit is
           only in the resolve's headers (HEAD, as huggingface_hub asks)
  relnext  the Link: rel="next" is relative (/api/...), among other links
A path that starts with /prefix/ is served as without it (an HF_ENDPOINT
with a path).
A repository that is not under ROOT is a 404 (X-Error-Code: RepositoryNotFound).
Every request is logged to LOG as "METHOD PATH RANGE STATUS", then "auth"
when it carried an Authorization header.
"""
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
LOG = sys.argv[2]
TOKEN = "test-token"
PAGE = 4
lock = threading.Lock()
dropped = set()


def log(line):
    with lock, open(LOG, "a") as f:
        f.write(line + "\n")


def rev_of(repo):
    return hashlib.sha1(repo.encode()).hexdigest()


def listing(repo, rdir, sub="", recursive=True):
    if repo.endswith("/evil"):
        sha = "ab" * 32
        return [{"type": "file", "path": p, "size": 10, "oid": "0" * 40, "lfs": {"oid": o, "size": 10}}
                for p, o in (("../../../evil-Q4_K_M.gguf", sha), ("/tmp/evil-Q4_K_M.gguf", sha),
                             ("a/./evil-Q4_K_M.gguf", sha), ("ok-Q4_K_M.gguf", "../../etc/passwd" + "0" * 48),
                             ("x\nQ4_K_M.gguf", sha))]
    out = []
    for top, dirs, files in os.walk(os.path.join(rdir, sub)):
        dirs.sort()
        rel_top = os.path.relpath(top, rdir)
        if rel_top != "." and rel_top != sub:
            out.append({"type": "directory", "path": rel_top, "oid": "0" * 40, "size": 0})
            if not recursive:
                dirs[:] = []
                continue
        for name in sorted(files):
            full = os.path.join(top, name)
            rel = os.path.relpath(full, rdir)
            data = open(full, "rb").read()
            git = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            e = {"type": "file", "path": rel, "size": len(data), "oid": git}
            if name.endswith(".gguf") and not repo.endswith("/nolfs"):
                sha = hashlib.sha256(data).hexdigest()
                if repo.endswith("/long"):
                    e["size"] = len(data) - 100
                if repo.endswith("/chunky"):
                    e["size"] = len(data) + 100
                if repo.endswith("/badsum"):
                    sha = hashlib.sha256(b"not the file").hexdigest()
                e["lfs"] = {"oid": sha, "size": e["size"], "pointerSize": 134}
            out.append(e)
    return out


class Hub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        log("%s %s %s %d%s" % (self.command, self.path, self.headers.get("Range", "-"), status,
                               " auth" if self.headers.get("Authorization") else ""))

    def repo_of(self, parts):
        if len(parts) < 2:
            return None, None
        repo = parts[0] + "/" + parts[1]
        rdir = os.path.join(ROOT, parts[0], parts[1])
        return repo, rdir

    def refused(self, repo, rdir):
        if not os.path.isdir(rdir):
            self.reply(404, b'{"error":"Repository not found"}', [("X-Error-Code", "RepositoryNotFound")])
            return True
        if repo.endswith(("/gated", "/far")):
            auth = self.headers.get("Authorization")
            if auth != "Bearer " + TOKEN:
                self.reply(401 if auth is None else 403, b'{"error":"gated"}', [("X-Error-Code", "GatedRepo")])
                return True
        return False

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = urllib.parse.urlparse(self.path).path
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        if parts[0] == "prefix":
            parts = parts[1:]
        if parts[:2] == ["api", "models"]:
            repo, rdir = self.repo_of(parts[2:])
            if repo is None or self.refused(repo, rdir):
                return self.reply(404) if repo is None else None
            if parts[4:6] == ["tree", "main"]:
                if repo.endswith("/norev"):
                    return self.reply(404, b'{"error":"Invalid rev id: main"}', [("X-Error-Code", "RevisionNotFound")])
                if repo.endswith("/stall"):
                    time.sleep(30)
                # pages of PAGE entries linked by Link: rel="next", as the Hub pages
                q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
                start = int(q.get("cursor", ["0"])[0])
                sub = "/".join(parts[6:]) if not repo.endswith("/deaf") else ""
                if not os.path.isdir(os.path.join(rdir, sub)):
                    return self.reply(404, b"", [("X-Error-Code", "EntryNotFound")])
                recursive = q.get("recursive", [""])[0] == "true" and not repo.endswith(("/flat", "/deaf"))
                entries = listing(repo, rdir, sub, recursive)
                first = max(0, start - 1) if repo.endswith("/overlap") else start
                body = json.dumps(entries[first:start + PAGE]).encode()
                if repo.endswith("/badjson"):
                    body = b"<html>not json</html>"
                hdr = [("Content-Type", "application/json")]
                if start + PAGE < len(entries):
                    nxt = "%s?recursive=true&cursor=%d" % (path, start + PAGE)
                    if repo.endswith("/relnext"):
                        hdr.append(("Link", '<%s?cursor=0>; rel="first", <%s>; rel=next' % (path, nxt)))
                    else:
                        hdr.append(("Link", '<http://127.0.0.1:%d%s>; rel="next"' % (self.server.server_address[1], nxt)))
                if not repo.endswith(("/noref", "/headref")):
                    hdr.append(("X-Repo-Commit", rev_of(repo)))
                return self.reply(200, body, hdr)
            if len(parts) == 4:
                if repo.endswith("/headref"):
                    return self.reply(404)
                return self.reply(200, json.dumps({"id": repo, "sha": rev_of(repo)}).encode())
            return self.reply(404)
        if len(parts) >= 5 and parts[2:4] == ["resolve", "main"]:
            repo, rdir = self.repo_of(parts)
            if self.refused(repo, rdir):
                return None
            if repo.endswith("/loop"):
                return self.reply(302, b"", [("Location", path)])
            if repo.endswith("/gone"):
                return self.reply(404, b"Not Found")
            if not os.path.isfile(os.path.join(rdir, *parts[4:])):
                return self.reply(404, b"", [("X-Error-Code", "EntryNotFound")])
            loc = "/cdn/" + "/".join(urllib.parse.quote(p) for p in parts[:2] + parts[4:])
            if repo.endswith("/far"):
                loc = "http://127.0.0.1:%d%s" % (FAR_PORT, loc)
            return self.reply(302, b"", [("Location", loc), ("X-Repo-Commit", rev_of(repo))])
        if parts[0] == "cdn" and len(parts) >= 4:
            return self.blob(parts[1] + "/" + parts[2], os.path.join(ROOT, *parts[1:]))
        return self.reply(404)

    def blob(self, repo, full):
        if not os.path.isfile(full):
            return self.reply(404)
        data = open(full, "rb").read()
        rng = self.headers.get("Range")
        if self.command == "HEAD":
            return self.reply(200, data)
        if repo.endswith("/portal"):
            return self.reply(200, b"<html><body>Sign in to the network</body></html>", [("Content-Type", "text/html")])
        if repo.endswith(("/drop", "/skew")) and rng is None and full not in dropped:
            with lock:
                dropped.add(full)
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            log("%s %s - dropped" % (self.command, self.path))
            self.close_connection = True
            return None
        if rng and not repo.endswith("/norange"):
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(data):
                return self.reply(416, b"", [("Content-Range", "bytes */%d" % len(data))])
            if repo.endswith("/skew"):
                start += 7
            return self.reply(206, data[start:], [("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))])
        if repo.endswith("/chunky") and not rng:
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for off in range(0, len(data), 65536):
                piece = data[off:off + 65536]
                self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            log("%s %s - chunked" % (self.command, self.path))
            return None
        if repo.endswith("/slow"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                for off in range(0, len(data), 32768):
                    self.wfile.write(data[off:off + 32768])
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
            log("%s %s - slow" % (self.command, self.path))
            return None
        return self.reply(200, data)


srv = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
srv.daemon_threads = True
# a second port, the "CDN" of the far mode: another origin for the token
far = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
far.daemon_threads = True
FAR_PORT = far.server_address[1]
threading.Thread(target=far.serve_forever, daemon=True).start()
print(srv.server_address[1], flush=True)
srv.serve_forever()
