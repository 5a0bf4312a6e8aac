#!/usr/bin/python3
"""Outside listeners for the escape matrix: a named unix socket at each PATH argument
and an abstract one for each @NAME argument. Every accepted connection appends the
socket's name to RECORD; READY is created once all are listening. Runs until killed."""
import os
import selectors
import socket
import sys


def main():
    record, ready, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    sel = selectors.DefaultSelector()
    for name in names:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind("\0" + name[1:] if name.startswith("@") else name)
        s.listen(16)
        sel.register(s, selectors.EVENT_READ, name)
    with open(ready, "w") as f:
        f.write(str(os.getpid()) + "\n")
    while True:
        for key, _ in sel.select():
            conn, _ = key.fileobj.accept()
            with open(record, "a") as f:
                f.write(key.data + "\n")
            conn.close()


if __name__ == "__main__":
    main()
