#!/bin/sh
# mkcert.sh DIR: what the API stand-in serves TLS with, made with openssl: a CA (DIR/ca.crt, the
# file a client trusts, as a pod's serviceaccount/ca.crt) and the server's certificate signed by
# it (DIR/server.crt, DIR/server.key) for 127.0.0.1 and localhost. P-256 keys: quick to make.
set -eu
d=$1
mkdir -p "$d"
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj /CN=standin-ca -addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign \
	-keyout "$d/ca.key" -out "$d/ca.crt" 2>"$d/openssl.log"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-subj /CN=kube-apiserver -keyout "$d/server.key" -out "$d/server.csr" 2>>"$d/openssl.log"
printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' 'extendedKeyUsage=serverAuth' \
	'keyUsage=critical,digitalSignature' 'basicConstraints=critical,CA:FALSE' >"$d/server.ext"
openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
	-days 2 -extfile "$d/server.ext" -out "$d/server.crt" 2>>"$d/openssl.log"
chmod 644 "$d/ca.crt" "$d/server.crt"
