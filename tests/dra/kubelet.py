#!/usr/bin/python3
"""A kubelet stand-in for gpuvm-dra's tests: the kubelet's side of the plugin registration and
DRA calls, with Debian's grpcio over unix sockets, as grpc-go speaks them (h2c, prior
knowledge). The stubs are generated from dra/proto by grpc_tools at test time (gen).

  kubelet.py GEN register REG_SOCK            GetInfo, then NotifyRegistrationStatus(true)
  kubelet.py GEN prepare DRA_SOCK NS/UID/NAME...    NodePrepareResources
  kubelet.py GEN unprepare DRA_SOCK NS/UID/NAME...  NodeUnprepareResources
  kubelet.py GEN raw SOCK METHOD HEX          a call of METHOD with the bytes HEX as its message
                                              (zeros:N: N zero bytes)
  kubelet.py GEN garbage SOCK                 bytes that are no HTTP/2 on a new connection

Answers are JSON on stdout (protobuf's JSON, field names as in the .proto); a call that ends
in a gRPC error prints {"code": NAME, "details": TEXT} and exits 3.
"""
import json
import socket
import sys


def main():
    gen, cmd, sock = sys.argv[1], sys.argv[2], sys.argv[3]
    args = sys.argv[4:]
    if cmd == "garbage":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(sock)
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(range(256)))
        got = b""
        try:
            while True:
                b = s.recv(4096)
                if not b:
                    break
                got += b
        except socket.timeout:
            print(json.dumps({"closed": False, "bytes": len(got)}))
            return 1
        print(json.dumps({"closed": True, "bytes": len(got)}))
        return 0

    sys.path.insert(0, gen)
    import grpc
    from google.protobuf import json_format
    import dra_pb2
    import dra_pb2_grpc
    import pluginregistration_pb2 as reg_pb2
    import pluginregistration_pb2_grpc as reg_pb2_grpc

    def out(m):
        print(json_format.MessageToJson(m, preserving_proto_field_name=True, indent=None,
                                        sort_keys=True))

    def claims(a):
        cs = []
        for c in a:
            ns, uid, name = c.split("/")
            cs.append(dra_pb2.Claim(namespace=ns, uid=uid, name=name))
        return cs

    ch = grpc.insecure_channel("unix:" + sock)
    try:
        if cmd == "register":
            stub = reg_pb2_grpc.RegistrationStub(ch)
            info = stub.GetInfo(reg_pb2.InfoRequest(), timeout=10)
            stub.NotifyRegistrationStatus(reg_pb2.RegistrationStatus(plugin_registered=True),
                                          timeout=10)
            out(info)
        elif cmd == "prepare":
            stub = dra_pb2_grpc.DRAPluginStub(ch)
            out(stub.NodePrepareResources(
                dra_pb2.NodePrepareResourcesRequest(claims=claims(args)), timeout=30))
        elif cmd == "unprepare":
            stub = dra_pb2_grpc.DRAPluginStub(ch)
            out(stub.NodeUnprepareResources(
                dra_pb2.NodeUnprepareResourcesRequest(claims=claims(args)), timeout=30))
        elif cmd == "raw":
            call = ch.unary_unary(args[0], request_serializer=lambda b: b,
                                  response_deserializer=lambda b: b)
            msg = (bytes(int(args[1][6:])) if args[1].startswith("zeros:")
                   else bytes.fromhex(args[1]))
            print(json.dumps({"reply": call(msg, timeout=10).hex()}))
        else:
            print("kubelet.py: unknown command " + cmd, file=sys.stderr)
            return 2
    except grpc.RpcError as e:
        print(json.dumps({"code": e.code().name, "details": e.details()}))
        return 3
    finally:
        ch.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
