import socket

import pytest


def test_connection_to_a_non_loopback_address_is_refused_at_once():
    with pytest.raises(ConnectionRefusedError, match="tests may not reach the network"):
        socket.create_connection(("10.255.255.1", 80), timeout=30)


def test_connect_ex_to_a_non_loopback_address_is_refused_too():
    with socket.socket() as sock, pytest.raises(ConnectionRefusedError, match="network"):
        sock.connect_ex(("10.255.255.1", 80))


def test_loopback_connections_still_work():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5) as client:
            accepted, _ = server.accept()
            client.sendall(b"ping")
            assert accepted.recv(4) == b"ping"
            accepted.close()
