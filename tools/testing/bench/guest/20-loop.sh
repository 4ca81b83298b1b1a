#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The matrix over the single-device loopback: one RDMA device on veth0 in
# the initial namespace is both server and client.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

bench_load
bench_topo loop
bench_matrix loop
tap_done
