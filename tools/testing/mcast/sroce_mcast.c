// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_mcast: UD multicast through the verbs alone (ibv_attach_mcast),
 * for what mckey cannot do: IPv6 groups (rdma_cm refuses them on RoCEv2),
 * checking what arrives, a receiver that must get nothing, and the
 * limits.  Each mode prints TAP ("ok N - ...", "# ..." diagnostics, the
 * plan "1..N" at the end) and exits 0 only if every assertion passed.
 *
 *   sroce_mcast recv   -d DEV -g GROUP [-n N] [-S SIZE] [-t SEC] [-r FILE]
 *                      [-z] [-N]
 *       attach a UD QP to GROUP (an IPv4 or IPv6 multicast address), touch
 *       FILE once attached, and take N messages within SEC seconds, each
 *       checked (GRH names GROUP, payload, immediate); -z: expect none
 *       (wait SEC seconds); -N: do not attach (with -z: a QP that did not
 *       join gets nothing).
 *   sroce_mcast send   -d DEV -g GROUP -a SRCADDR [-n N] [-S SIZE]
 *       send N messages to GROUP (QPN 0xFFFFFF) from the GID of SRCADDR.
 *   sroce_mcast limits -d DEV -g GROUP [-G]
 *       query_device's limits; attach past max_mcast_qp_attach (ENOMEM),
 *       bad arguments (EINVAL), destroy while attached (EBUSY); -G: also
 *       max_mcast_grp groups on one QP, and one more (ENOMEM).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "sroce_tap.h"

#define MCAST_QPN	0xffffffu
#define QKEY		0x11111111u
#define GRH_LEN		40
#define MAX_MSG		4096

static const char *dev_name, *group_str, *src_str, *ready_file;
static int num_msgs = 20, msg_size = 256;
static double wait_secs = 30;
static bool expect_none, no_attach, group_limit;

/* --------------------------------------------------------- resources */

struct ud {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t slot;
};

/* An address as a GID: IPv4 v4-mapped, as the RDMA core writes it. */
static bool addr_to_gid(const char *s, union ibv_gid *gid)
{
	struct in_addr a4;

	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &a4, 4);
		return true;
	}
	return inet_pton(AF_INET6, s, gid->raw) == 1;
}

static bool gid_is_v4(const union ibv_gid *gid)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid->raw, pfx, sizeof(pfx));
}

static struct ibv_qp *make_qp(struct ud *u, enum ibv_qp_type type, int wr)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = u->cq,
		.recv_cq = u->cq,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
	};

	return ibv_create_qp(u->pd, &ia);
}

/* A UD QP through INIT and RTR to RTS. */
static int ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = QKEY,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void ud_open(struct ud *u, int nslots)
{
	memset(u, 0, sizeof(*u));
	u->ctx = open_ctx(dev_name);
	if (!u->ctx)
		bail("cannot open %s", dev_name);
	u->pd = ibv_alloc_pd(u->ctx);
	u->cq = u->pd ? ibv_create_cq(u->ctx, 2 * nslots + 2, NULL, NULL, 0) :
		NULL;
	if (!u->cq)
		bail("PD/CQ");
	u->slot = GRH_LEN + msg_size;
	u->buf = calloc(nslots, u->slot);
	if (!u->buf)
		bail("calloc");
	u->mr = ibv_reg_mr(u->pd, u->buf, nslots * u->slot,
			   IBV_ACCESS_LOCAL_WRITE);
	u->qp = make_qp(u, IBV_QPT_UD, nslots);
	if (!u->mr || !u->qp || ud_ready(u->qp))
		bail("MR/QP");
}

static void ud_close(struct ud *u)
{
	ibv_destroy_qp(u->qp);
	ibv_dereg_mr(u->mr);
	free(u->buf);
	ibv_destroy_cq(u->cq);
	ibv_dealloc_pd(u->pd);
	ibv_close_device(u->ctx);
}

static void fill(uint8_t *p, uint32_t seq)
{
	int k;

	for (k = 0; k < msg_size; k++)
		p[k] = (uint8_t)(seq * 7 + k);
}

/* ------------------------------------------------------------- recv */

static int post_recv(struct ud *u, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(u->buf + i * u->slot),
		.length = u->slot,
		.lkey = u->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(u->qp, &wr, &bad);
}

/* One receive completion: what a message to @group must look like. */
static bool good_msg(struct ud *u, const struct ibv_wc *wc,
		     const union ibv_gid *group, uint8_t *seen)
{
	const uint8_t *p = u->buf + wc->wr_id * u->slot;
	const uint8_t *daddr = gid_is_v4(group) ? p + 20 + 16 : p + 24;
	uint8_t want[MAX_MSG];
	uint32_t seq;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    !(wc->wc_flags & IBV_WC_GRH) || !(wc->wc_flags & IBV_WC_WITH_IMM) ||
	    wc->byte_len != (uint32_t)(GRH_LEN + msg_size)) {
		diag("bad completion: status %d opcode %d flags %#x len %u",
		     wc->status, wc->opcode, wc->wc_flags, wc->byte_len);
		return false;
	}
	if (memcmp(daddr, gid_is_v4(group) ? &group->raw[12] : group->raw,
		   gid_is_v4(group) ? 4 : 16)) {
		diag("the GRH does not name the group");
		return false;
	}
	seq = ntohl(wc->imm_data);
	fill(want, seq);
	if (seq >= (uint32_t)num_msgs || seen[seq] ||
	    memcmp(p + GRH_LEN, want, msg_size)) {
		diag("message %u: unexpected, repeated or corrupt", seq);
		return false;
	}
	seen[seq] = 1;
	return true;
}

static int mode_recv(void)
{
	union ibv_gid group;
	int i, n, got = 0, bad = 0;
	uint8_t seen[1024] = { 0 };
	struct ibv_wc wc[16];
	double end;
	struct ud u;
	FILE *f;

	if (!addr_to_gid(group_str, &group) || num_msgs > 1024)
		bail("bad group or count");
	ud_open(&u, num_msgs);
	for (i = 0; i < num_msgs; i++)
		if (post_recv(&u, i))
			bail("post_recv");
	if (!no_attach)
		check(!ibv_attach_mcast(u.qp, &group, 0),
		      "attach QP %u to %s", u.qp->qp_num, group_str);
	if (ready_file) {
		f = fopen(ready_file, "w");
		if (f)
			fclose(f);
	}
	end = now() + wait_secs;
	while (now() < end && (expect_none || got + bad < num_msgs)) {
		n = ibv_poll_cq(u.cq, 16, wc);
		if (n < 0)
			bail("poll_cq");
		for (i = 0; i < n; i++) {
			if (good_msg(&u, &wc[i], &group, seen))
				got++;
			else
				bad++;
		}
		if (!n)
			usleep(1000);
	}
	if (expect_none)
		check(!got && !bad, "%s: nothing arrived in %.0f s (%d did)",
		      no_attach ? "a QP that did not attach" :
				  "a QP attached to another group",
		      wait_secs, got + bad);
	else
		check(got == num_msgs && !bad,
		      "%s: %d of %d messages, each checked (%d bad)",
		      group_str, got, num_msgs, bad);
	if (!no_attach)
		check(!ibv_detach_mcast(u.qp, &group, 0), "detach");
	ud_close(&u);
	return tap_done();
}

/* ------------------------------------------------------------- send */

static int gid_index_of(struct ibv_context *ctx, const union ibv_gid *want)
{
	union ibv_gid gid;
	int i;

	for (i = 0; i < 16; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) &&
		    !memcmp(&gid, want, sizeof(gid)))
			return i;
	return -1;
}

static int mode_send(void)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	union ibv_gid group, src;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	int i, n, sent = 0, sgid;
	double end;
	struct ud u;

	if (!addr_to_gid(group_str, &group) || !src_str ||
	    !addr_to_gid(src_str, &src))
		bail("bad group or source");
	ud_open(&u, 1);
	sgid = gid_index_of(u.ctx, &src);
	if (sgid < 0)
		bail("no GID for %s", src_str);
	aa.grh.dgid = group;
	aa.grh.sgid_index = sgid;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(u.pd, &aa);
	if (!check(ah != NULL, "AH to %s from GID %d", group_str, sgid))
		bail("create_ah");
	sge = (struct ibv_sge){ .addr = (uintptr_t)u.buf,
				.length = msg_size, .lkey = u.mr->lkey };
	for (i = 0; i < num_msgs; i++) {
		fill(u.buf, i);
		wr = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED,
			.imm_data = htonl(i),
			.wr.ud = { .ah = ah, .remote_qpn = MCAST_QPN,
				   .remote_qkey = QKEY },
		};
		if (ibv_post_send(u.qp, &wr, &bad))
			break;
		/* One at a time: the buffer is reused. */
		end = now() + 5;
		while (!(n = ibv_poll_cq(u.cq, 1, &wc)) && now() < end)
			usleep(100);
		if (n != 1 || wc.status != IBV_WC_SUCCESS)
			break;
		sent++;
		usleep(2000);	/* UD: do not outrun the receivers */
	}
	check(sent == num_msgs, "sent %d of %d messages to %s", sent, num_msgs,
	      group_str);
	ibv_destroy_ah(ah);
	ud_close(&u);
	return tap_done();
}

/* ----------------------------------------------------------- limits */

/* An attach that must fail with @err. */
static void attach_fails(struct ibv_qp *qp, const union ibv_gid *gid,
			 int err, const char *what)
{
	int rc = ibv_attach_mcast(qp, gid, 0);

	check(rc == err, "%s: attach fails with %s (got %d %s)", what,
	      strerror(err), rc, rc ? strerror(rc) : "");
	if (!rc)
		ibv_detach_mcast(qp, gid, 0);
}

static void limits_attrs(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	if (ibv_query_device(ctx, a))
		bail("query_device");
	check(a->max_mcast_grp == 8192 && a->max_mcast_qp_attach == 56 &&
	      a->max_total_mcast_qp_attach == 8192 * 56,
	      "query_device: max_mcast_grp %d, max_mcast_qp_attach %d, max_total_mcast_qp_attach %d",
	      a->max_mcast_grp, a->max_mcast_qp_attach,
	      a->max_total_mcast_qp_attach);
}

/* max_mcast_grp groups for one QP, then one more. */
static void limits_groups(struct ud *u, int max)
{
	union ibv_gid g;
	int i, ok = 0;
	double t = now();

	addr_to_gid("239.200.0.0", &g);
	for (i = 0; i < max; i++) {
		g.raw[14] = i >> 8;
		g.raw[15] = i & 0xff;
		if (ibv_attach_mcast(u->qp, &g, 0))
			break;
		ok++;
	}
	check(ok == max, "one QP attached to %d groups (%.1f s)", ok,
	      now() - t);
	g.raw[13] = 201;
	attach_fails(u->qp, &g, ENOMEM, "group max_mcast_grp + 1");
	g.raw[13] = 200;
	for (i = 0; i < ok; i++) {
		g.raw[14] = i >> 8;
		g.raw[15] = i & 0xff;
		if (ibv_detach_mcast(u->qp, &g, 0))
			break;
	}
	check(i == ok, "detached from all of them");
}

static int mode_limits(void)
{
	struct ibv_qp *qps[64], *rc;
	struct ibv_device_attr a;
	union ibv_gid group, uni;
	int i, n = 0, rc_err;
	struct ud u;

	if (!addr_to_gid(group_str, &group))
		bail("bad group");
	msg_size = 64;
	ud_open(&u, 1);
	limits_attrs(u.ctx, &a);
	if (a.max_mcast_qp_attach + 1 > 64)
		bail("max_mcast_qp_attach too large for this test");
	for (i = 0; i <= a.max_mcast_qp_attach; i++) {
		qps[i] = make_qp(&u, IBV_QPT_UD, 1);
		if (!qps[i] || ud_ready(qps[i]))
			bail("UD QP %d", i);
	}
	for (i = 0; i < a.max_mcast_qp_attach; i++)
		if (!ibv_attach_mcast(qps[i], &group, 0))
			n++;
	check(n == a.max_mcast_qp_attach, "%d QPs attached to %s", n,
	      group_str);
	check(!ibv_attach_mcast(qps[0], &group, 0),
	      "attaching an attached QP again succeeds");
	attach_fails(qps[a.max_mcast_qp_attach], &group, ENOMEM,
		     "QP max_mcast_qp_attach + 1");
	rc_err = ibv_destroy_qp(qps[0]);
	check(rc_err == EBUSY, "destroying an attached QP fails with EBUSY (got %d)",
	      rc_err);
	for (i = 0; i < a.max_mcast_qp_attach; i++)
		ibv_detach_mcast(qps[i], &group, 0);
	check(ibv_detach_mcast(qps[0], &group, 0) == EINVAL,
	      "detaching a QP that is not attached fails with EINVAL");
	addr_to_gid("10.9.9.9", &uni);
	attach_fails(qps[0], &uni, EINVAL, "a unicast GID");
	rc = make_qp(&u, IBV_QPT_RC, 1);
	if (!rc)
		bail("RC QP");
	attach_fails(rc, &group, EINVAL, "an RC QP");
	ibv_destroy_qp(rc);
	/* The device's groups are all free again. */
	if (group_limit)
		limits_groups(&u, a.max_mcast_grp);
	/* Attached at exit: uverbs detaches, the device leaves the group. */
	check(!ibv_attach_mcast(qps[1], &group, 0), "attach, then exit attached");
	return tap_done();
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sroce_mcast recv|send|limits -d DEV -g GROUP [-a SRCADDR]\n"
		"       [-n N] [-S SIZE] [-t SEC] [-r FILE] [-z] [-N] [-G]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode;
	int c;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "d:g:a:n:S:t:r:zNG")) != -1) {
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'g': group_str = optarg; break;
		case 'a': src_str = optarg; break;
		case 'n': num_msgs = atoi(optarg); break;
		case 'S': msg_size = atoi(optarg); break;
		case 't': wait_secs = atof(optarg); break;
		case 'r': ready_file = optarg; break;
		case 'z': expect_none = true; break;
		case 'N': no_attach = true; break;
		case 'G': group_limit = true; break;
		default: usage();
		}
	}
	if (!dev_name || !group_str || msg_size < 1 || msg_size > MAX_MSG ||
	    num_msgs < 1)
		usage();
	if (!strcmp(mode, "recv"))
		return mode_recv();
	if (!strcmp(mode, "send"))
		return mode_send();
	if (!strcmp(mode, "limits"))
		return mode_limits();
	usage();
	return 2;
}
