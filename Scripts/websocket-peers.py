#!/usr/bin/env python3
"""WebSocket servers for NetworkCore's tests, on 127.0.0.1, until standard input closes or the process is
stopped. Prints "real PORT" and "hostile PORT" once both listen; with `--tls CERT KEY`, then "secure PORT".

real: the `websockets` package from PyPI (a server no one here wrote):
  /echo           every message sent back as it came (text as text, binary as binary)
  /count/N        N text messages "0".."N-1" at once, then echoes
  /close/CODE     on the first message, closes with CODE and the reason "bye"
  /protocol       picks the first subprotocol it knows among those offered (chat.v2, chat.v1)
  /auth           401 with a JSON body unless "Authorization: Bearer good"; then echoes
hostile: a server of our own that answers the opening by hand, then breaks a rule:
  /masked /rsv /opcode /bad-utf8 /big-ping /fragmented-ping /bad-continuation /bad-close-code
                  one bad frame, then reads until the client closes
  /drop           a text message, then, once the client sends one, the connection closed with no close frame
  /stall          opens, then never sends or answers anything (no pong)
  /silent         takes the connection and the request, and never answers
  /bad-accept     101 with a wrong Sec-WebSocket-Accept
  /ok             200 with a body instead of 101
  /huge           a binary message of 4,000 bytes in two fragments
  /deflate        agrees to permessage-deflate, sends the client's offer back as text, then for each client
                  message a text "rsv1=R wire=N" (its first bit of three reserved, its payload's length
                  on the wire) and the message compressed again, contexts kept on both sides
  /deflate-bomb   agrees to permessage-deflate, then sends 1,000,000 zero bytes compressed into about 1 KB
  /deflate-unoffered
                  answers with an extension the client did not offer
  /flaky          the Nth connection to it sends "connection N"; the first two are dropped with no close frame
                  once the client sends a message, the third and later echo until the client closes
  /burst          the 101, two text messages and the connection's end (no close frame) in one TCP segment
  /no-read        opens, then reads nothing (the client's sends fill the connection)
secure (with --tls): the `websockets` package's server over TLS, the same paths as real
"""
import asyncio
import base64
import hashlib
import socket
import ssl
import sys
import zlib

from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


async def real_handler(ws):
    path = ws.request.path
    if path.startswith("/count/"):
        for i in range(int(path.split("/")[2])):
            await ws.send(str(i))
    if path.startswith("/close/"):
        await ws.recv()
        await ws.close(int(path.split("/")[2]), "bye")
        return
    async for message in ws:
        await ws.send(message)


def real_request(connection, request):
    if request.path == "/auth" and request.headers.get("Authorization") != "Bearer good":
        return Response(401, "Unauthorized", Headers([("Content-Type", "application/json")]), b'{"error":"token"}')
    return None


def frame(opcode, payload=b"", fin=True, rsv=0, mask=False):
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    length = len(payload)
    if length < 126:
        head = bytes([first, (0x80 if mask else 0) | length])
    elif length < 65536:
        head = bytes([first, (0x80 if mask else 0) | 126]) + length.to_bytes(2, "big")
    else:
        head = bytes([first, (0x80 if mask else 0) | 127]) + length.to_bytes(8, "big")
    if mask:
        key = b"\x01\x02\x03\x04"
        return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return head + payload


async def read_frame(reader):
    """A client frame: its first byte and its unmasked payload."""
    first, second = await reader.readexactly(2)
    length = second & 0x7F
    if length == 126:
        length = int.from_bytes(await reader.readexactly(2), "big")
    elif length == 127:
        length = int.from_bytes(await reader.readexactly(8), "big")
    key = await reader.readexactly(4) if second & 0x80 else b"\0\0\0\0"
    payload = await reader.readexactly(length)
    return first, bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def deflated(compressor, data):
    """A message compressed as permessage-deflate sends it: flushed, without the flush's last 4 bytes."""
    return (compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH))[:-4]


CONNECTIONS = {}


async def echo_until_close(reader, writer):
    """Echoes each client message as it came (one frame each), and answers the close frame."""
    while True:
        first, payload = await read_frame(reader)
        opcode = first & 0x0F
        writer.write(frame(opcode, payload[:2] if opcode == 8 else payload))
        await writer.drain()
        if opcode == 8:
            return


async def deflate_echo(reader, writer, offer):
    writer.write(frame(1, offer.encode()))
    inflater = zlib.decompressobj(-15)
    compressor = zlib.compressobj(wbits=-15)
    while True:
        first, payload = await read_frame(reader)
        opcode = first & 0x0F
        if opcode == 8:
            writer.write(frame(8, payload[:2]))
            await writer.drain()
            return
        rsv1 = (first >> 6) & 1
        data = inflater.decompress(payload + b"\0\0\xff\xff") if rsv1 else payload
        writer.write(frame(1, ("rsv1=%d wire=%d" % (rsv1, len(payload))).encode()))
        writer.write(frame(opcode, deflated(compressor, data), rsv=4))
        await writer.drain()


BAD = {
    "/masked": frame(1, b"hi", mask=True),
    "/rsv": frame(1, b"hi", rsv=4),
    "/opcode": frame(3, b""),
    "/bad-utf8": frame(1, b"\xce\xba\xff"),
    "/big-ping": frame(9, b"x" * 126),
    "/fragmented-ping": frame(9, b"", fin=False),
    "/bad-continuation": frame(0, b"x"),
    "/bad-close-code": frame(8, (1005).to_bytes(2, "big")),
}


def accept_of(request):
    """The Sec-WebSocket-Accept answering the key of an opening request's bytes."""
    key = next((line.split(":", 1)[1].strip() for line in request.decode("latin-1").split("\r\n")
                if line.lower().startswith("sec-websocket-key:")), "")
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


async def hostile(reader, writer):
    try:
        request = await reader.readuntil(b"\r\n\r\n")
        lines = request.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip() for line in lines[1:] if ":" in line}
        if path == "/burst":
            # Corked: the 101, the messages and the end (FIN) leave in one segment when uncorked below.
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
        if path == "/no-read":
            # Opens the socket, then reads nothing: the client's sends fill the connection and wait.
            writer.write(
                ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Accept: %s\r\n\r\n" % accept_of(request)).encode())
            await writer.drain()
            await asyncio.sleep(60)
            return
        if path == "/silent":
            await reader.read()
            return
        if path == "/ok":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello")
            await writer.drain()
            await reader.read()
            return
        accept = accept_of(request)
        if path == "/bad-accept":
            accept = base64.b64encode(b"not the right answer").decode()
        extension = {"/deflate": "permessage-deflate", "/deflate-bomb": "permessage-deflate",
                     "/deflate-unoffered": "x-webkit-deflate-frame"}.get(path)
        writer.write(
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Accept: %s\r\n%s\r\n"
             % (accept, "Sec-WebSocket-Extensions: %s\r\n" % extension if extension else "")).encode())
        if path == "/deflate":
            await deflate_echo(reader, writer, headers.get("sec-websocket-extensions", ""))
            return
        if path == "/flaky":
            CONNECTIONS[path] = CONNECTIONS.get(path, 0) + 1
            writer.write(frame(1, ("connection %d" % CONNECTIONS[path]).encode()))
            await writer.drain()
            if CONNECTIONS[path] > 2:
                await echo_until_close(reader, writer)
            else:
                await read_frame(reader)  # the client's answer: it has read the message
            return
        if path == "/deflate-bomb":
            writer.write(frame(2, deflated(zlib.compressobj(wbits=-15), bytes(1_000_000)), rsv=4))
        elif path in BAD:
            writer.write(BAD[path])
        elif path == "/drop":
            writer.write(frame(1, b"last"))
            await writer.drain()
            await read_frame(reader)  # the client's answer: it has read the message
            return  # closed (a FIN) with no close frame
        elif path == "/burst":
            # The 101, two messages and the connection's end at once: the client reads them in one go.
            writer.write(frame(1, b"first") + frame(1, b"second"))
            await writer.drain()
            writer.write_eof()  # the FIN, with no close frame
            await asyncio.sleep(0)
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 0)
            return
        elif path == "/huge":
            writer.write(frame(2, b"x" * 2000, fin=False) + frame(0, b"y" * 2000))
        await writer.drain()
        # Reads what the client sends (its close frame, its pings) and answers nothing, until it closes.
        while await reader.read(65536):
            pass
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main():
    real = await serve(real_handler, "127.0.0.1", 0, process_request=real_request,
                       select_subprotocol=lambda ws, offered: next((p for p in ("chat.v2", "chat.v1") if p in offered), None),
                       max_size=None, ping_interval=None)
    bad = await asyncio.start_server(hostile, "127.0.0.1", 0)
    print("real", real.sockets[0].getsockname()[1], flush=True)
    print("hostile", bad.sockets[0].getsockname()[1], flush=True)
    if len(sys.argv) == 4 and sys.argv[1] == "--tls":
        # The websockets package's server over TLS, with the certificate and key the test made.
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[2], sys.argv[3])
        secure = await serve(real_handler, "127.0.0.1", 0, process_request=real_request, ssl=context,
                             max_size=None, ping_interval=None)
        print("secure", secure.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    # Ends when the test that started it closes standard input (or is gone).
    loop.add_reader(sys.stdin.fileno(), lambda: done.done() or (sys.stdin.buffer.read1(1) or done.set_result(None)))
    await done


if __name__ == "__main__":
    asyncio.run(main())
