// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_mr: the MR verbs beyond rdma_rxe on an rxe-ABI device, data
 * checked: re-registration and dma-buf MRs.
 *
 *   sroce_mr rereg  -d DEV -g GIDX [-n CYCLES]
 *   sroce_mr dmabuf -d DEV -g GIDX [-U]
 *   sroce_mr odp    -d DEV -g GIDX
 *
 * Two loopback RC pairs on DEV (GID index GIDX): pair A on PD A, pair B
 * on PD B.
 *
 * rereg: the "target" MR starts on PD A.  The requester of a pair
 * WRITEs and READs the target through its rkey, from a buffer of its own.
 *   trans    rereg to a new buffer: same keys, WRITE and READ land in the
 *            new buffer, the old one is left alone, its addresses fail
 *   access   rereg without remote write: a WRITE fails with a remote
 *            access error and changes nothing, READ works
 *   pd       rereg to PD B: pair A is refused, pair B gets through
 *   errors   the errnos of bad reregs, and a failed rereg changes nothing;
 *            EBUSY while a window is bound to the MR
 *   inflight a thread moves the MR to fresh pages at the same address
 *            CYCLES times while READs and WRITEs run through it: every
 *            completion succeeds and every packet's data (path MTU 1024)
 *            comes whole from one generation of the pages
 *
 * dmabuf: an MR on a udmabuf (memfd pages; -U: there is no /dev/udmabuf,
 * only the errors that need none are checked).  librxe 44 has no
 * reg_dmabuf_mr, so the program sends the uverbs method itself (ioctl).
 *   data     WRITE and READ through its rkey, SEND into it and from it,
 *            WRITE from it (the zero-copy send path): every byte checked
 *            through the memfd's own mapping; past its end fails
 *   errors   a bad fd, an fd that is not a dma-buf, a range past the
 *            buffer, length 0; rereg of a dma-buf MR (EOPNOTSUPP)
 *
 * odp: MRs with IBV_ACCESS_ON_DEMAND over fresh mappings, so that every
 * access faults on sroce's data path (checked through its counters).
 *   caps     ibv_query_device_ex's odp_caps (implicit ODP too); the
 *            errnos of bad implicit registrations
 *   data     WRITE, READ, SEND and both atomics into and out of ODP
 *            memory, as target and as local SGE: every byte checked
 *   inval    madvise(MADV_DONTNEED), munmap+mmap at the same address:
 *            the new pages are seen; after munmap a remote access error
 *            (target) or a local protection error (local SGE), and the
 *            QP, connected again, works
 *   advise   advise_mr (sent by hand: librxe 44 has none) prefetches:
 *            no data path fault after it; its errnos
 *   fork     COW: a WRITE after fork lands in the parent's pages, the
 *            child keeps the old data
 *   implicit one MR over the whole address space (NULL, SIZE_MAX):
 *            WRITE, READ, SEND, FETCH_ADD into and out of fresh memory,
 *            each across two of sroce's 16 MiB children; madvise, munmap
 *            of a whole child, addresses above the user address space;
 *            advise_mr; the device's cap on children; traffic while
 *            a thread empties and remaps the memory; dereg
 *
 * Prints TAP; exits 0 only if every assertion passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <linux/udmabuf.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "sroce_tap.h"

#define LEN		65536		/* the target buffers and local ones */
#define MSG		4096		/* one transfer: 4 packets of 1024 */
#define MTU_BYTES	1024
#define WC_WAIT		10.0		/* seconds for a completion */
#define IOVA		0x100000000ULL	/* an iova unlike any address */
#define ACC_RW		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

static const char *dev_name;
static int gid_index = -1;
static int cycles = 200;

static struct ibv_context *ctx;
static union ibv_gid gid;

/* A requester and its responder, connected, on one PD and one CQ. */
struct pair {
	const char *name;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *req, *rsp;
	char *lbuf;			/* the requester's own memory */
	struct ibv_mr *lmr;
};

static struct pair pa = { .name = "pair A" }, pb = { .name = "pair B" };

static char *map_buf(void)
{
	void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bail("mmap");
	return p;
}

/* RESET, INIT, RTR to @dqpn on our own GID, RTS. */
static int qp_connect(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = ACC_RW | IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void pair_connect(struct pair *p)
{
	if (qp_connect(p->req, p->rsp->qp_num) ||
	    qp_connect(p->rsp, p->req->qp_num))
		bail("%s: connect", p->name);
}

static void pair_open(struct pair *p)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	p->pd = ibv_alloc_pd(ctx);
	p->cq = p->pd ? ibv_create_cq(ctx, 128, NULL, NULL, 0) : NULL;
	if (!p->cq)
		bail("%s: pd, cq", p->name);
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	p->req = ibv_create_qp(p->pd, &ia);
	p->rsp = ibv_create_qp(p->pd, &ia);
	p->lbuf = map_buf();
	p->lmr = ibv_reg_mr(p->pd, p->lbuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!p->req || !p->rsp || !p->lmr)
		bail("%s: qps, mr", p->name);
	pair_connect(p);
}

static int post_rdma(struct pair *p, enum ibv_wr_opcode op, size_t loff,
		     uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->lbuf + loff,
		.length = len,
		.lkey = p->lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(p->req, &wr, &bad);
}

/* One completion of @p's CQ, its status; -1 if none came in time. */
static int wait_wc(struct pair *p, struct ibv_wc *wc)
{
	double end = now() + WC_WAIT;

	while (now() < end) {
		int n = ibv_poll_cq(p->cq, 1, wc);

		if (n < 0)
			return -1;
		if (n)
			return wc->status;
		usleep(200);
	}
	return -1;
}

/*
 * One WRITE or READ of @len bytes between @p's buffer at @loff and
 * @raddr; its completion status (-1: none, or not posted).  A failure
 * leaves the pair in ERR: it is connected again.
 */
static int rdma(struct pair *p, enum ibv_wr_opcode op, size_t loff,
		uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_wc wc;
	int st;

	if (post_rdma(p, op, loff, len, raddr, rkey, 1))
		return -1;
	st = wait_wc(p, &wc);
	if (st) {
		diag("%s: %s to %#" PRIx64 " rkey %#x: status %d (%s)",
		     p->name, op == IBV_WR_RDMA_WRITE ? "WRITE" : "READ",
		     raddr, rkey, st,
		     st > 0 ? ibv_wc_status_str(st) : "no completion");
		pair_connect(p);
	}
	return st;
}

/* @n bytes of a pattern that depends on @seed. */
static void fill(char *buf, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (char)(seed * 131 + i * 7 + (i >> 8));
}

static bool same(const char *a, unsigned int seed, size_t n)
{
	char *want = malloc(n);
	bool ok;

	if (!want)
		bail("malloc");
	fill(want, n, seed);
	ok = !memcmp(a, want, n);
	free(want);
	return ok;
}

static bool all_bytes(const char *buf, char c, size_t n)
{
	while (n--)
		if (*buf++ != c)
			return false;
	return true;
}

/* WRITE seed's pattern from @p to @addr, and check it arrived at @at. */
static bool write_lands(struct pair *p, struct ibv_mr *mr, uint64_t addr,
			const char *at, unsigned int seed)
{
	fill(p->lbuf, MSG, seed);
	return rdma(p, IBV_WR_RDMA_WRITE, 0, MSG, addr, mr->rkey) == 0 &&
	       same(at, seed, MSG);
}

/* READ from @addr into @p and check it brought seed's pattern. */
static bool read_brings(struct pair *p, struct ibv_mr *mr, uint64_t addr,
			unsigned int seed)
{
	memset(p->lbuf + MSG, 0, MSG);
	return rdma(p, IBV_WR_RDMA_READ, MSG, MSG, addr, mr->rkey) == 0 &&
	       same(p->lbuf + MSG, seed, MSG);
}

/*
 * The rereg command as a provider with rereg_mr sends it (librxe 44 has
 * none: its ibv_rereg_mr() fails in libibverbs with EOPNOTSUPP), through
 * the legacy write() interface, with @iova the MR's new address; then
 * what ibv_rereg_mr() updates in @mr.  The errno, 0 on success.
 */
static int rereg_cmd(uint32_t handle, int flags, uint32_t pd_handle,
		     void *addr, size_t len, uint64_t iova, int access,
		     struct ib_uverbs_rereg_mr_resp *resp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr cmd;
	} req;

	memset(&req, 0, sizeof(req));
	memset(resp, 0, sizeof(*resp));
	req.hdr.command = IB_USER_VERBS_CMD_REREG_MR;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(*resp) / 4;
	req.cmd.response = (uintptr_t)resp;
	req.cmd.mr_handle = handle;
	req.cmd.flags = flags;
	req.cmd.start = (uintptr_t)addr;
	req.cmd.length = len;
	req.cmd.hca_va = iova;
	req.cmd.pd_handle = pd_handle;
	req.cmd.access_flags = access;
	if (write(ctx->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	return 0;
}

/* A rereg without new memory or PD of the MR with @handle. */
static int rereg_handle(uint32_t handle, int flags, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;

	return rereg_cmd(handle, flags, 0, NULL, 0, 0, access, &resp);
}

static int rereg_va(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
		    void *addr, size_t len, uint64_t iova, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	int err;

	err = rereg_cmd(mr->handle, flags,
			flags & IBV_REREG_MR_CHANGE_PD ? pd->handle : 0, addr,
			len, iova, access, &resp);
	if (err)
		return err;
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = len;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	return 0;
}

static int rereg(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		 size_t len, int access)
{
	return rereg_va(mr, flags, pd, addr, len, (uintptr_t)addr, access);
}

static bool check_errno(int got, int want, const char *what)
{
	return check(got == want, "%s: %s (got %s)", what, strerror(want),
		     got > 0 ? strerror(got) : got ? "failure, no errno" : "success");
}

/* ---------------------------------------------------------------- cases */

static char *buf1, *buf2;
static struct ibv_mr *tmr;	/* the target, on buf1 then buf2 */

static void case_trans(void)
{
	uint32_t lkey = tmr->lkey, rkey = tmr->rkey;
	int err;

	check(write_lands(&pa, tmr, (uintptr_t)buf1 + 8192, buf1 + 8192, 1),
	      "before: WRITE lands in the first buffer");
	memset(buf1, 0x5a, LEN);
	fill(buf2 + LEN / 2 - MSG, MSG, 2);
	err = rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2, LEN / 2,
		    0);
	check_errno(err, 0, "trans: rereg to a new buffer of half the size");
	check(tmr->lkey == lkey && tmr->rkey == rkey,
	      "trans: keys kept (lkey %#x rkey %#x, were %#x %#x)",
	      tmr->lkey, tmr->rkey, lkey, rkey);
	check(write_lands(&pa, tmr, (uintptr_t)buf2 + 4096, buf2 + 4096, 3),
	      "trans: WRITE through the same rkey lands in the new buffer");
	check(read_brings(&pa, tmr, (uintptr_t)buf2 + 4096, 3),
	      "trans: READ through it brings the new buffer's data");
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, (uintptr_t)buf1 + 8192,
		   tmr->rkey) == IBV_WC_REM_ACCESS_ERR,
	      "trans: WRITE to the old buffer's address: remote access error");
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG,
		   (uintptr_t)buf2 + LEN / 2 - MSG / 2, tmr->rkey) ==
	      IBV_WC_REM_ACCESS_ERR,
	      "trans: WRITE past the new length: remote access error");
	check(all_bytes(buf1, 0x5a, LEN), "trans: the old buffer is left alone");
	err = rereg_va(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2,
		       LEN / 2, IOVA, 0);
	check_errno(err, 0, "trans: the same memory at iova 0x100000000");
	check(write_lands(&pa, tmr, IOVA + 4096, buf2 + 4096, 12) &&
	      read_brings(&pa, tmr, IOVA + 4096, 12),
	      "trans: WRITE and READ at that iova reach the memory");
	err = rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2, LEN / 2,
		    0);
	check_errno(err, 0, "trans: back to iova == address");
	/* The last bytes of the new, shorter registration. */
	check(rdma(&pa, IBV_WR_RDMA_READ, 0, MSG, (uintptr_t)buf2 + LEN / 2 - MSG,
		   tmr->rkey) == 0 && same(pa.lbuf, 2, MSG),
	      "trans: the new buffer's end is reachable");
}

static void case_access(void)
{
	int err;

	err = rereg(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	check_errno(err, 0, "access: rereg to LOCAL_WRITE | REMOTE_READ");
	fill(buf2, MSG, 4);
	fill(pa.lbuf, MSG, 5);
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, (uintptr_t)buf2,
		   tmr->rkey) == IBV_WC_REM_ACCESS_ERR,
	      "access: WRITE fails with a remote access error");
	check(same(buf2, 4, MSG), "access: the refused WRITE changed nothing");
	check(read_brings(&pa, tmr, (uintptr_t)buf2, 4),
	      "access: READ still works");
	err = rereg(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0, ACC_RW);
	check_errno(err, 0, "access: rereg back to remote write");
	check(write_lands(&pa, tmr, (uintptr_t)buf2, buf2, 6),
	      "access: WRITE works again");
}

static void case_pd(void)
{
	int err;

	err = rereg(tmr, IBV_REREG_MR_CHANGE_PD, pb.pd, NULL, 0, 0);
	check_errno(err, 0, "pd: rereg to PD B");
	fill(buf2, MSG, 7);
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, (uintptr_t)buf2,
		   tmr->rkey) == IBV_WC_REM_ACCESS_ERR && same(buf2, 7, MSG),
	      "pd: PD A's QP is refused (remote access error, nothing written)");
	check(write_lands(&pb, tmr, (uintptr_t)buf2, buf2, 8),
	      "pd: PD B's QP WRITEs into it");
	check(read_brings(&pb, tmr, (uintptr_t)buf2, 8),
	      "pd: PD B's QP READs from it");
	err = rereg(tmr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS |
		    IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf1, LEN, ACC_RW);
	check_errno(err, 0, "all three: back to PD A and the first buffer");
	check(write_lands(&pa, tmr, (uintptr_t)buf1 + LEN - MSG,
			  buf1 + LEN - MSG, 9) &&
	      rdma(&pb, IBV_WR_RDMA_WRITE, 0, MSG, (uintptr_t)buf1,
		   tmr->rkey) == IBV_WC_REM_ACCESS_ERR,
	      "all three: PD A's QP gets through to the first buffer, PD B's not");
}

static bool bind_mw(struct ibv_mw *mw, struct ibv_mr *mr, uint64_t len)
{
	struct ibv_mw_bind bind = {
		.wr_id = 2,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)mr->addr,
			       .length = len,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
	};
	struct ibv_wc wc;

	return !ibv_bind_mw(pa.req, mw, &bind) && wait_wc(&pa, &wc) == 0;
}

static void case_errors(void)
{
	char *ro = map_buf(), *gone = map_buf();
	struct ibv_mr *romr, *mwmr;
	struct ibv_mw *mw;

	check_errno(rereg(tmr, 0, pa.pd, NULL, 0, 0), EINVAL, "flags 0");
	check_errno(rereg(tmr, 1 << 3, pa.pd, NULL, 0, 0), EOPNOTSUPP,
		    "an unknown flag");
	check_errno(rereg_va(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2,
			     LEN, (uintptr_t)buf2 + 1, 0), EINVAL,
		    "an iova at another page offset than the memory");
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  IBV_ACCESS_REMOTE_WRITE), EINVAL,
		    "remote write without local write");
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  ACC_RW | IBV_ACCESS_ZERO_BASED), EOPNOTSUPP,
		    "an access flag sroce does not support (zero-based)");
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2,
			  1ULL << 40, 0), EINVAL, "a 1 TiB length");
	munmap(gone, LEN);
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, gone,
			  LEN, 0), EFAULT, "unmapped memory");
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION |
			  IBV_REREG_MR_CHANGE_ACCESS, pa.pd, buf2, LEN,
			  ACC_RW | IBV_ACCESS_ZERO_BASED), EOPNOTSUPP,
		    "the same with new memory");
	check(write_lands(&pa, tmr, (uintptr_t)buf1, buf1, 10) &&
	      read_brings(&pa, tmr, (uintptr_t)buf1, 10),
	      "the failed reregs changed nothing: the first buffer still works");

	/* Pinned for reading only: it cannot be made writable in place. */
	romr = ibv_reg_mr(pa.pd, ro, LEN, IBV_ACCESS_REMOTE_READ);
	if (!romr)
		bail("reg_mr read-only");
	check_errno(rereg(romr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  ACC_RW), EACCES,
		    "read-only pages made writable in place");
	check_errno(rereg(romr, IBV_REREG_MR_CHANGE_ACCESS |
			  IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, ro, LEN,
			  ACC_RW), 0,
		    "the same with new pinning (TRANS)");
	check(write_lands(&pa, romr, (uintptr_t)ro, ro, 11),
	      "... and then WRITEs land in it");
	check(!ibv_dereg_mr(romr), "dereg the reregistered MR");

	mwmr = ibv_reg_mr(pa.pd, ro, LEN, ACC_RW | IBV_ACCESS_MW_BIND);
	mw = mwmr ? ibv_alloc_mw(pa.pd, IBV_MW_TYPE_1) : NULL;
	if (!mw || !bind_mw(mw, mwmr, MSG))
		bail("window bound to an MR");
	check_errno(rereg(mwmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  ACC_RW), EBUSY, "a window is bound to the MR");
	check(bind_mw(mw, mwmr, 0), "unbind the window");
	check_errno(rereg(mwmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  ACC_RW), 0, "no window any more");
	check(!ibv_dealloc_mw(mw) && !ibv_dereg_mr(mwmr),
	      "dealloc the window, dereg the MR");
	munmap(ro, LEN);
}

/* ------------------------------------------------------------ in flight */

/*
 * The target is buf1 (LEN bytes, iova buf1).  Each generation g maps
 * fresh pages at buf1 and fills them with 8-byte words g << 32 | index,
 * then moves the MR onto them.  READs must bring, in each packet, words
 * of one generation with the right index.
 */
static atomic_int gen_done;
static atomic_bool stop, mover_done;

static void fill_gen(uint64_t *w, uint32_t g)
{
	size_t i;

	for (i = 0; i < LEN / 8; i++)
		w[i] = (uint64_t)g << 32 | i;
}

static void *mover(void *arg)
{
	uint32_t g;

	(void)arg;
	for (g = 1; g <= (uint32_t)cycles && !atomic_load(&stop); g++) {
		if (mmap(buf1, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			 MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
		fill_gen((uint64_t *)buf1, g);
		if (rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf1,
			  LEN, 0))
			break;
		atomic_store(&gen_done, g);
	}
	atomic_store(&mover_done, true);
	return NULL;
}

/* Check a READ of MSG bytes from word @first: -1 if good, else the word. */
static long bad_word(const uint64_t *w, size_t first)
{
	size_t i, per = MTU_BYTES / 8;

	for (i = 0; i < MSG / 8; i++) {
		if ((uint32_t)w[i] != first + i ||
		    (w[i] >> 32) != (w[i - i % per] >> 32) ||
		    (w[i] >> 32) > (uint64_t)cycles)
			return i;
	}
	return -1;
}

/* The READ or WRITE in flight from each slot of pair A's buffer. */
#define DEPTH	8
static struct { size_t first; bool rd; } slot[DEPTH + 1];

/* Post the @n-th transfer from slot @s (1..DEPTH, MSG bytes each). */
static int post_slot(unsigned int s, uint64_t n)
{
	bool rd = n % 2 == 0;
	/* READs check the first half; WRITEs go to the second. */
	size_t first = (n / 2 % (LEN / MSG / 2) + (rd ? 0 : LEN / MSG / 2)) *
		       (MSG / 8);

	slot[s].first = first;
	slot[s].rd = rd;
	return post_rdma(&pa, rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			 s * MSG, MSG, (uintptr_t)(buf1 + first * 8),
			 tmr->rkey, s);
}

static void case_inflight(void)
{
	unsigned int reads = 0, writes = 0, errors = 0, torn = 0, mixed = 0;
	unsigned int s, out = 0;
	struct ibv_wc wc;
	pthread_t th;
	uint64_t n = 0;

	fill_gen((uint64_t *)buf1, 0);
	if (pthread_create(&th, NULL, mover, NULL))
		bail("pthread_create");
	for (s = 1; s <= DEPTH; s++)
		out += !post_slot(s, n++);
	while (out) {
		const uint64_t *w;
		long bad;

		if (wait_wc(&pa, &wc) != 0) {
			errors++;
			break;
		}
		out--;
		s = wc.wr_id;
		if (slot[s].rd) {
			reads++;
			w = (const uint64_t *)(pa.lbuf + s * MSG);
			mixed += w[0] >> 32 != w[MSG / 8 - 1] >> 32;
			bad = bad_word(w, slot[s].first);
			if (bad >= 0 && torn++ < 3)
				diag("READ at word %zu: word %ld is %#" PRIx64,
				     slot[s].first, bad, w[bad]);
		} else {
			writes++;
		}
		/* The slot is checked: use it again. */
		if (!atomic_load(&mover_done)) {
			if (post_slot(s, n++))
				errors++;
			else
				out++;
		}
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	diag("%d reregs, %u READs (%u of them across a rereg), %u WRITEs",
	     atomic_load(&gen_done), reads, mixed, writes);
	check(atomic_load(&gen_done) == cycles,
	      "inflight: %d reregs to fresh pages", cycles);
	check(!errors, "inflight: every READ and WRITE completed successfully");
	check(!torn, "inflight: every READ packet from one generation (%u not)",
	      torn);
}

/* -------------------------------------------------------------- dma-buf */

static bool no_udmabuf;

/* A dma-buf MR: what reg_dmabuf_mr returns, as far as the tests need. */
struct dmr {
	uint32_t handle, lkey, rkey;
};

static void put_attr(struct ib_uverbs_attr *a, uint16_t id, uint16_t len,
		     uint64_t data)
{
	a->attr_id = id;
	a->len = len;
	a->flags = UVERBS_ATTR_F_MANDATORY;
	a->data = data;
}

/* Zero a uverbs ioctl of @len bytes on an MR @method; fill its header. */
static void mr_ioctl_hdr(struct ib_uverbs_ioctl_hdr *hdr, size_t len,
			 uint16_t method, uint16_t num_attrs)
{
	memset(hdr, 0, len);
	hdr->length = len;
	hdr->object_id = UVERBS_OBJECT_MR;
	hdr->method_id = method;
	hdr->num_attrs = num_attrs;
	hdr->driver_id = RDMA_DRIVER_RXE;	/* the uapi's: sroce's is rxe's */
}

/* UVERBS_METHOD_REG_DMABUF_MR through the ioctl; the errno, 0 if done. */
static int reg_dmabuf(struct ibv_pd *pd, int fd, uint64_t offset,
		      uint64_t len, uint64_t iova, int access, struct dmr *m)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[9];
	} req;
	struct ib_uverbs_attr *a = req.attr;

	mr_ioctl_hdr(&req.hdr, sizeof(req), UVERBS_METHOD_REG_DMABUF_MR, 9);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_HANDLE, 0, 0);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, 0, pd->handle);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_OFFSET, 8, offset);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_LENGTH, 8, len);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_IOVA, 8, iova);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_FD, 4, (uint32_t)fd);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, 4, access);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, 4,
		 (uintptr_t)&m->lkey);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, 4,
		 (uintptr_t)&m->rkey);
	if (ioctl(pd->context->cmd_fd, RDMA_VERBS_IOCTL, &req))
		return errno;
	m->handle = req.attr[0].data;
	return 0;
}

/* DEREG_MR by handle (librxe's ibv_dereg_mr() wants its own ibv_mr). */
static int dereg_handle(uint32_t handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dereg_mr cmd;
	} req;

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_DEREG_MR;
	req.hdr.in_words = sizeof(req) / 4;
	req.cmd.mr_handle = handle;
	if (write(ctx->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	return 0;
}

/* A dma-buf of @len bytes from udmabuf; its memfd mapped at *@view. */
static int udmabuf_new(size_t len, char **view)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = len };
	int dev, fd, memfd;

	dev = open("/dev/udmabuf", O_RDWR);
	memfd = memfd_create("sroce", MFD_ALLOW_SEALING);
	if (dev < 0 || memfd < 0 || ftruncate(memfd, len) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		bail("udmabuf: /dev/udmabuf, memfd");
	c.memfd = memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	*view = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (fd < 0 || *view == MAP_FAILED)
		bail("UDMABUF_CREATE");
	close(memfd);
	close(dev);
	return fd;
}

/* @p's responder posts a receive of @len bytes into @lkey at @addr. */
static void post_recv_rsp(struct pair *p, uint64_t addr, uint32_t len,
			  uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(p->rsp, &wr, &bad))
		bail("post_recv");
}

/* A SEND of @len bytes from @lkey at @addr; both completions good? */
static bool send_ok(struct pair *p, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 8, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	return !ibv_post_send(p->req, &wr, &bad) && wait_wc(p, &wc) == 0 &&
	       wait_wc(p, &wc) == 0;
}

#define DB_OFF		4096		/* the MR starts a page into the buffer */
#define DB_IOVA		0x200000000ULL

static void case_dmabuf_data(void)
{
	uint32_t len = LEN - 2 * DB_OFF;
	struct dmr m;
	char *view;
	int fd, err;

	fd = udmabuf_new(LEN, &view);
	err = reg_dmabuf(pa.pd, fd, DB_OFF, len, DB_IOVA, ACC_RW, &m);
	if (!check_errno(err, 0, "reg_dmabuf_mr of a udmabuf, from its 2nd page"))
		return;
	check(m.lkey == m.rkey, "lkey == rkey (%#x)", m.lkey);
	memset(view, 0x5a, LEN);

	fill(pa.lbuf, MSG, 21);
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, DB_IOVA + 8192, m.rkey) == 0 &&
	      same(view + DB_OFF + 8192, 21, MSG),
	      "WRITE through its rkey lands in the memfd's pages");
	fill(view + DB_OFF + len - MSG, MSG, 22);
	memset(pa.lbuf + MSG, 0, MSG);
	check(rdma(&pa, IBV_WR_RDMA_READ, MSG, MSG, DB_IOVA + len - MSG,
		   m.rkey) == 0 && same(pa.lbuf + MSG, 22, MSG),
	      "READ through it brings the memfd's data (its last bytes)");
	fill(pa.lbuf, MSG, 23);
	post_recv_rsp(&pa, DB_IOVA + 16384, MSG, m.lkey);
	check(send_ok(&pa, (uintptr_t)pa.lbuf, MSG, pa.lmr->lkey) &&
	      same(view + DB_OFF + 16384, 23, MSG),
	      "SEND into it (its lkey in a receive)");
	fill(view + DB_OFF + 20480, MSG, 24);
	memset(pa.lbuf + 2 * MSG, 0, MSG);
	post_recv_rsp(&pa, (uintptr_t)pa.lbuf + 2 * MSG, MSG, pa.lmr->lkey);
	check(send_ok(&pa, DB_IOVA + 20480, MSG, m.lkey) &&
	      same(pa.lbuf + 2 * MSG, 24, MSG),
	      "SEND from it (its lkey in a send)");
	fill(view + DB_OFF + 24576, 3 * MSG, 25);
	memset(buf1, 0, 3 * MSG);
	{
		struct ibv_sge sge = { .addr = DB_IOVA + 24576,
				       .length = 3 * MSG, .lkey = m.lkey };
		struct ibv_send_wr wr = {
			.wr_id = 9, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)buf1,
				     .rkey = tmr->rkey },
		};
		struct ibv_send_wr *bad;
		struct ibv_wc wc;

		check(!ibv_post_send(pa.req, &wr, &bad) &&
		      wait_wc(&pa, &wc) == 0 && same(buf1, 25, 3 * MSG),
		      "WRITE of 12 KiB from it into a plain MR");
	}
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, DB_IOVA + len - MSG / 2,
		   m.rkey) == IBV_WC_REM_ACCESS_ERR,
	      "WRITE past its end: remote access error");
	check(all_bytes(view, 0x5a, DB_OFF) &&
	      all_bytes(view + DB_OFF + len, 0x5a, LEN - DB_OFF - len),
	      "the buffer outside the MR is left alone");
	check_errno(rereg_handle(m.handle, IBV_REREG_MR_CHANGE_ACCESS, ACC_RW),
		    EOPNOTSUPP, "rereg of a dma-buf MR");
	check_errno(dereg_handle(m.handle), 0, "dereg the dma-buf MR");
	check(rdma(&pa, IBV_WR_RDMA_READ, MSG, MSG, DB_IOVA, m.rkey) ==
	      IBV_WC_REM_ACCESS_ERR, "its rkey is gone");
	munmap(view, LEN);
	close(fd);
}

static void case_dmabuf_errors(void)
{
	int memfd = memfd_create("sroce-plain", 0), fd;
	struct dmr m;
	char *view;

	if (memfd < 0 || ftruncate(memfd, LEN))
		bail("memfd");
	check_errno(reg_dmabuf(pa.pd, -1, 0, LEN, 0, ACC_RW, &m), EBADF,
		    "dma-buf fd -1");
	check_errno(reg_dmabuf(pa.pd, memfd, 0, LEN, 0, ACC_RW, &m), EINVAL,
		    "an fd that is not a dma-buf (a memfd)");
	close(memfd);
	if (no_udmabuf)
		return;
	fd = udmabuf_new(LEN, &view);
	check_errno(reg_dmabuf(pa.pd, fd, DB_OFF, LEN, 0, ACC_RW, &m), EINVAL,
		    "a range past the buffer's end");
	check_errno(reg_dmabuf(pa.pd, fd, 0, 0, 0, ACC_RW, &m), EINVAL,
		    "length 0");
	check_errno(reg_dmabuf(pa.pd, fd, 0, LEN, 0, IBV_ACCESS_REMOTE_WRITE,
			       &m), EINVAL, "remote write without local write");
	munmap(view, LEN);
	close(fd);
}

static void mode_dmabuf(void)
{
	struct ibv_mr *mr;
	char *view;
	int fd;

	if (!no_udmabuf) {
		fd = udmabuf_new(LEN, &view);
		errno = 0;
		mr = ibv_reg_dmabuf_mr(pa.pd, 0, LEN, 0, fd, ACC_RW);
		diag("ibv_reg_dmabuf_mr() of this libibverbs and provider: %s, "
		     "errno %d (%s)", mr ? "an MR" : "NULL", errno,
		     strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
		munmap(view, LEN);
		close(fd);
		case_dmabuf_data();
	}
	case_dmabuf_errors();
}

/* ------------------------------------------------------------------ ODP */

/*
 * ODP: MRs registered with IBV_ACCESS_ON_DEMAND (librxe 44 passes the
 * flag through ibv_reg_mr; it has no advise_mr, so that is sent by hand).
 * Every ODP buffer is a fresh anonymous mapping the MR has never mapped:
 * each access below faults on sroce's data path.
 */
#define ODP_LEN		(1 << 20)
#define BIG		(64 * 1024)	/* 64 packets of 1024, 16 pages */
#define ACC_ODP		(ACC_RW | IBV_ACCESS_REMOTE_ATOMIC | \
			 IBV_ACCESS_ON_DEMAND)

static const char *const odp_counter_names[] = {
	"odp_misses", "odp_faults", "odp_prefetches", "odp_fault_errors",
	"odp_invalidations", "rnr_nak_sent", "odp_implicit_children",
	"odp_implicit_refused",
};

enum {
	C_MISS, C_FAULT, C_PREFETCH, C_ERR, C_INVAL, C_RNR, C_CHILD,
	C_REFUSED, C_N
};

/*
 * The port counters of odp_counter_names[], from "rdma statistic" (the
 * device's sysfs is not in a network namespace's /sys).
 */
static void counters(uint64_t *v)
{
	char cmd[128], out[8192], want[64], *p;
	size_t len;
	FILE *f;
	int i;

	snprintf(cmd, sizeof(cmd), "rdma statistic show link %s/1", dev_name);
	f = popen(cmd, "r");
	len = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[len] = 0;
	if (!f || pclose(f))
		bail("%s", cmd);
	for (i = 0; i < C_N; i++) {
		snprintf(want, sizeof(want), " %s ", odp_counter_names[i]);
		p = strstr(out, want);
		if (!p || sscanf(p + strlen(want), "%" SCNu64, &v[i]) != 1)
			bail("%s: no %s", cmd, odp_counter_names[i]);
	}
}

/* A fresh ODP MR of ODP_LEN bytes on @p's PD; its memory at *@buf. */
static struct ibv_mr *odp_mr(struct pair *p, char **buf)
{
	struct ibv_mr *mr;

	*buf = mmap(NULL, ODP_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*buf == MAP_FAILED)
		bail("mmap");
	mr = ibv_reg_mr(p->pd, *buf, ODP_LEN, ACC_ODP);
	if (!mr)
		bail("ibv_reg_mr(IBV_ACCESS_ON_DEMAND)");
	return mr;
}

/*
 * One work request of @op with one SGE (@laddr, @len, @lkey) and its
 * completion's status (-1: none); a failed one reconnects the pair.
 */
static int wr1(struct pair *p, enum ibv_wr_opcode op, uint64_t laddr,
	       uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
	       uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 11, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int st;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = compare_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(p->req, &wr, &bad))
		return -1;
	st = wait_wc(p, &wc);
	if (st) {
		diag("opcode %d at %#" PRIx64 ": status %d (%s)", op, raddr, st,
		     st > 0 ? ibv_wc_status_str(st) : "no completion");
		pair_connect(p);
	}
	return st;
}

/*
 * A SEND from (@saddr, @skey) into a receive of (@raddr, @rkey): the
 * status of the receive's completion, or of the send's if that failed.
 */
static int send1(struct pair *p, uint64_t saddr, uint32_t skey,
		 uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = { .addr = saddr, .length = len, .lkey = skey };
	struct ibv_send_wr wr = {
		.wr_id = 12, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc[2];
	int i, st = 0;

	post_recv_rsp(p, raddr, len, rkey);
	if (ibv_post_send(p->req, &wr, &bad))
		return -1;
	for (i = 0; i < 2; i++) {
		int s = wait_wc(p, &wc[i]);

		if (s) {
			st = s;
			break;
		}
	}
	if (st) {
		diag("SEND: status %d (%s)", st,
		     st > 0 ? ibv_wc_status_str(st) : "no completion");
		pair_connect(p);
	}
	return st;
}

static void case_odp_caps(void)
{
	struct ibv_device_attr_ex a;
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	uint32_t ud = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;

	if (!check(!ibv_query_device_ex(ctx, NULL, &a),
		   "ibv_query_device_ex"))
		return;
	diag("odp_caps: general %#" PRIx64 " rc %#x uc %#x ud %#x",
	     a.odp_caps.general_caps, a.odp_caps.per_transport_caps.rc_odp_caps,
	     a.odp_caps.per_transport_caps.uc_odp_caps,
	     a.odp_caps.per_transport_caps.ud_odp_caps);
	check(a.odp_caps.general_caps ==
	      (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
	      "caps: ODP and implicit ODP supported");
	check((a.odp_caps.per_transport_caps.rc_odp_caps & rc) == rc,
	      "caps: RC send, recv, write, read, atomic, srq_recv");
	check((a.odp_caps.per_transport_caps.ud_odp_caps & ud) == ud,
	      "caps: UD send, recv");
}

/* Faults on the data path: the responder's, the requester's, the completer's. */
static void case_odp_data(void)
{
	uint64_t c0[C_N], c1[C_N];
	struct ibv_mr *t, *l;
	char *tb, *lb;
	uint64_t *cell;

	counters(c0);
	t = odp_mr(&pa, &tb);	/* a target */
	l = odp_mr(&pa, &lb);	/* a local buffer */
	check(t->lkey == t->rkey, "ODP MR registered on a fresh mmap");

	fill(pa.lbuf, BIG, 31);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)tb + 4096, t->rkey, 0, 0) == 0 &&
	      same(tb + 4096, 31, BIG),
	      "WRITE 64 KiB into a fresh ODP target: every byte there");
	fill(tb + 256 * 1024, BIG, 32);	/* the CPU's pages, not the MR's */
	memset(pa.lbuf, 0, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)tb + 256 * 1024, t->rkey, 0, 0) == 0 &&
	      same(pa.lbuf, 32, BIG),
	      "READ 64 KiB out of an ODP target the MR never mapped");
	memset(pa.lbuf, 0x77, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)tb + 512 * 1024, t->rkey, 0, 0) == 0 &&
	      all_bytes(pa.lbuf, 0, BIG),
	      "READ of never touched ODP memory brings zeros");

	fill(lb, BIG, 33);
	memset(buf1, 0, BIG);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)lb, BIG, l->lkey,
		  (uintptr_t)buf1, tmr->rkey, 0, 0) == 0 && same(buf1, 33, BIG),
	      "WRITE 64 KiB out of a local ODP buffer (requester faults)");
	fill(buf1, BIG, 34);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)lb + 128 * 1024, BIG,
		  l->lkey, (uintptr_t)buf1, tmr->rkey, 0, 0) == 0 &&
	      same(lb + 128 * 1024, 34, BIG),
	      "READ 64 KiB into a local ODP buffer (completer faults)");
	fill(lb + 320 * 1024, MSG, 35);
	check(send1(&pa, (uintptr_t)lb + 320 * 1024, l->lkey,
		    (uintptr_t)tb + 640 * 1024, t->lkey, MSG) == 0 &&
	      same(tb + 640 * 1024, 35, MSG),
	      "SEND from an ODP buffer into an ODP receive buffer");

	cell = (uint64_t *)(tb + 700 * 1024);
	check(wr1(&pa, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)lb + 400 * 1024,
		  8, l->lkey, (uintptr_t)cell, t->rkey, 5, 0) == 0 &&
	      *cell == 5 && *(uint64_t *)(lb + 400 * 1024) == 0,
	      "FETCH_ADD on fresh ODP memory, the old value into ODP memory");
	check(wr1(&pa, IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)lb + 480 * 1024,
		  8, l->lkey, (uintptr_t)cell, t->rkey, 5, 0x1234) == 0 &&
	      *cell == 0x1234 && *(uint64_t *)(lb + 480 * 1024) == 5,
	      "CMP_SWAP on it (5 -> 0x1234), the old value into fresh ODP memory");

	counters(c1);
	diag("misses %" PRIu64 " faults %" PRIu64 " rnr_nak_sent %" PRIu64,
	     c1[C_MISS] - c0[C_MISS], c1[C_FAULT] - c0[C_FAULT],
	     c1[C_RNR] - c0[C_RNR]);
	check(c1[C_MISS] > c0[C_MISS] && c1[C_FAULT] > c0[C_FAULT] &&
	      c1[C_RNR] > c0[C_RNR] && c1[C_ERR] == c0[C_ERR],
	      "counters: odp_misses, odp_faults, rnr_nak_sent moved; no errors");
	ibv_dereg_mr(l);
	munmap(lb, ODP_LEN);
	ibv_dereg_mr(t);
	munmap(tb, ODP_LEN);
}

/*
 * Accesses to unmapped ODP memory at @p (16 KiB of it) through @mr fail:
 * as the target, with a remote access error; as a local SGE, with a
 * local protection error (and wr1() connects the pair again).
 */
static void odp_unmapped(struct ibv_mr *mr, char *p, const char *label)
{
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, MSG,
		  pa.lmr->lkey, (uintptr_t)p + 4096, mr->rkey, 0, 0) ==
	      IBV_WC_REM_ACCESS_ERR,
	      "%sWRITE to unmapped ODP memory: remote access error", label);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, MSG, pa.lmr->lkey,
		  (uintptr_t)p, mr->rkey, 0, 0) == IBV_WC_REM_ACCESS_ERR,
	      "%sREAD of it: remote access error", label);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)p + 8192, MSG, mr->lkey,
		  (uintptr_t)buf1, tmr->rkey, 0, 0) == IBV_WC_LOC_PROT_ERR,
	      "%sWRITE from it (a local SGE): local protection error", label);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)p + 12288, MSG, mr->lkey,
		  (uintptr_t)buf1, tmr->rkey, 0, 0) == IBV_WC_LOC_PROT_ERR,
	      "%sREAD into it (the response's data): local protection error",
	      label);
}

/* The MM takes the pages away under a registered ODP MR. */
static void case_odp_invalidate(void)
{
	uint64_t c0[C_N], c1[C_N];
	struct ibv_mr *t;
	char *tb, *p;

	t = odp_mr(&pa, &tb);
	fill(pa.lbuf, BIG, 41);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)tb, t->rkey, 0, 0) == 0 &&
	      same(tb, 41, BIG), "WRITE into the ODP MR");
	counters(c0);
	check(!madvise(tb, BIG, MADV_DONTNEED), "madvise(MADV_DONTNEED)");
	counters(c1);
	check(c1[C_INVAL] > c0[C_INVAL], "odp_invalidations moved (%" PRIu64
	      ")", c1[C_INVAL] - c0[C_INVAL]);
	memset(pa.lbuf, 0x77, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)tb, t->rkey, 0, 0) == 0 &&
	      all_bytes(pa.lbuf, 0, BIG),
	      "READ after it: the new (zero) pages, not the old data");
	fill(pa.lbuf, BIG, 42);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)tb, t->rkey, 0, 0) == 0 &&
	      same(tb, 42, BIG), "WRITE after it lands in the new pages");

	p = mmap(tb + BIG, BIG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (!check(p == tb + BIG, "munmap+mmap at the same address (MAP_FIXED)"))
		return;
	fill(p, BIG, 43);
	memset(pa.lbuf, 0, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)p, t->rkey, 0, 0) == 0 && same(pa.lbuf, 43, BIG),
	      "READ there brings the new mapping's data");

	/* The last 64 KiB of the MR go for good. */
	p = tb + ODP_LEN - BIG;
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)p, t->rkey, 0, 0) == 0,
	      "WRITE to the MR's last 64 KiB");
	counters(c0);
	check(!munmap(p, BIG), "munmap of the MR's last 64 KiB");
	odp_unmapped(t, p, "");
	counters(c1);
	check(c1[C_ERR] >= c0[C_ERR] + 4, "odp_fault_errors moved (%" PRIu64
	      ")", c1[C_ERR] - c0[C_ERR]);
	fill(pa.lbuf, MSG, 44);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, MSG,
		  pa.lmr->lkey, (uintptr_t)tb + 8192, t->rkey, 0, 0) == 0 &&
	      same(tb + 8192, 44, MSG),
	      "the QP, connected again, still works with the MR");
	ibv_dereg_mr(t);
	munmap(tb, ODP_LEN - BIG);
}

/* UVERBS_METHOD_ADVISE_MR by hand (librxe 44 has no advise_mr). */
static int advise(struct ibv_pd *pd, int advice, uint32_t flags,
		  struct ibv_sge *sge, int n)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[4];
	} req;
	struct ib_uverbs_attr *a = req.attr;

	mr_ioctl_hdr(&req.hdr, sizeof(req), UVERBS_METHOD_ADVISE_MR, 4);
	put_attr(a++, UVERBS_ATTR_ADVISE_MR_PD_HANDLE, 0, pd->handle);
	put_attr(a++, UVERBS_ATTR_ADVISE_MR_ADVICE, 8, advice);
	put_attr(a++, UVERBS_ATTR_ADVISE_MR_FLAGS, 4, flags);
	put_attr(a++, UVERBS_ATTR_ADVISE_MR_SGE_LIST, n * sizeof(*sge),
		 (uintptr_t)sge);
	if (ioctl(pd->context->cmd_fd, RDMA_VERBS_IOCTL, &req))
		return errno;
	return 0;
}

/* Whether odp_prefetches reaches @want within 5 s (the work item's). */
static bool await_prefetches(uint64_t want)
{
	uint64_t c[C_N];
	double end;

	for (end = now() + 5; now() < end; usleep(1000)) {
		counters(c);
		if (c[C_PREFETCH] == want)
			return true;
	}
	return false;
}

static void case_odp_advise(void)
{
	uint64_t c0[C_N], c1[C_N];
	struct ibv_sge sge;
	struct ibv_mr *t;
	char *tb;
	int err;

	t = odp_mr(&pa, &tb);
	errno = 0;
	sge = (struct ibv_sge){ .addr = (uintptr_t)tb, .length = 256 * 1024,
				.lkey = t->lkey };
	err = ibv_advise_mr(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	diag("ibv_advise_mr() of this libibverbs and provider: %d (%s)", err,
	     strerror(err));
	counters(c0);
	err = advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	check_errno(err, 0, "advise_mr PREFETCH_WRITE, FLUSH, 256 KiB");
	fill(pa.lbuf, BIG, 51);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)tb + 4096, t->rkey, 0, 0) == 0 &&
	      same(tb + 4096, 51, BIG), "WRITE into the prefetched range");
	memset(pa.lbuf, 0, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)tb + 128 * 1024, t->rkey, 0, 0) == 0 &&
	      all_bytes(pa.lbuf, 0, BIG), "READ out of it");
	counters(c1);
	check(c1[C_PREFETCH] == c0[C_PREFETCH] + 1 &&
	      c1[C_MISS] == c0[C_MISS] && c1[C_FAULT] == c0[C_FAULT],
	      "counters: one prefetch, no data path miss or fault (%" PRIu64
	      " %" PRIu64 " %" PRIu64 ")", c1[C_PREFETCH] - c0[C_PREFETCH],
	      c1[C_MISS] - c0[C_MISS], c1[C_FAULT] - c0[C_FAULT]);

	sge.addr = (uintptr_t)tb + 512 * 1024;
	check_errno(advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1),
		    0, "advise_mr PREFETCH, asynchronous");
	check(await_prefetches(c0[C_PREFETCH] + 2),
	      "the asynchronous prefetch is done by the work item");
	check_errno(advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
			   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0,
		    "advise_mr PREFETCH_NO_FAULT");
	sge.lkey = t->lkey ^ 0x80;
	check_errno(advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), ENOENT,
		    "advise_mr with a bad lkey");
	sge.lkey = pa.lmr->lkey;
	sge.addr = (uintptr_t)pa.lbuf;
	check_errno(advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), ENOENT,
		    "advise_mr on an MR that is not ODP");
	sge = (struct ibv_sge){ .addr = (uintptr_t)tb + ODP_LEN - 4096,
				.length = 8192, .lkey = t->lkey };
	check_errno(advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), EFAULT,
		    "advise_mr past the MR's end");
	sge.length = 4096;
	check_errno(advise(pb.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), ENOENT,
		    "advise_mr on another PD's MR");
	ibv_dereg_mr(t);
	munmap(tb, ODP_LEN);
}

/* fork: the parent's pages are write protected (COW) under the MR. */
static void case_odp_fork(void)
{
	uint64_t c0[C_N], c1[C_N];
	int pipefd[2], st;
	struct ibv_mr *t;
	char *tb, c;
	pid_t pid;

	t = odp_mr(&pa, &tb);
	fill(pa.lbuf, BIG, 61);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)tb, t->rkey, 0, 0) == 0 &&
	      same(tb, 61, BIG), "WRITE into the ODP MR before fork");
	if (pipe(pipefd))
		bail("pipe");
	counters(c0);
	pid = fork();
	if (pid < 0)
		bail("fork");
	if (!pid) {
		/* The child: its copy must keep the old data. */
		close(pipefd[1]);
		if (read(pipefd[0], &c, 1) != 1)
			_exit(3);
		_exit(same(tb, 61, BIG) ? 0 : 1);
	}
	close(pipefd[0]);
	fill(pa.lbuf, BIG, 62);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)tb, t->rkey, 0, 0) == 0 &&
	      same(tb, 62, BIG),
	      "WRITE after fork lands in the parent's (copied) pages");
	counters(c1);
	check(c1[C_INVAL] > c0[C_INVAL] && c1[C_FAULT] > c0[C_FAULT],
	      "fork invalidated the MR's pages and the WRITE faulted them again");
	if (write(pipefd[1], "x", 1) != 1)
		bail("pipe write");
	close(pipefd[1]);
	check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0, "the child still sees the data before fork");
	memset(pa.lbuf, 0, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)tb, t->rkey, 0, 0) == 0 && same(pa.lbuf, 62, BIG),
	      "READ after the child is gone brings the parent's data");
	ibv_dereg_mr(t);
	munmap(tb, ODP_LEN);
}

static void case_odp_errors(void)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pa.pd, NULL, SIZE_MAX, ACC_ODP | IBV_ACCESS_HUGETLB);
	check(!mr && errno == EINVAL,
	      "implicit ODP with IBV_ACCESS_HUGETLB: EINVAL (got %s)",
	      mr ? "an MR" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr_iova(pa.pd, NULL, SIZE_MAX, 4096, ACC_ODP);
	check(!mr && errno == EINVAL,
	      "address 0, length SIZE_MAX, iova 4096: EINVAL (got %s)",
	      mr ? "an MR" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

/* rdma res shows the ODP MR, and the faults the data path made for it. */
static void case_odp_restrack(void)
{
	char out[65536], key[32], *rec, *next, *p;
	unsigned long n = 0;
	struct ibv_mr *t;
	size_t len = 0;
	bool found;
	FILE *f;
	char *tb;

	t = odp_mr(&pa, &tb);
	fill(pa.lbuf, BIG, 71);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)tb, t->rkey, 0, 0) == 0 &&
	      same(tb, 71, BIG), "WRITE into a fresh ODP MR");
	f = popen("rdma -dd res show mr 2>&1", "r");
	while (f && len < sizeof(out) - 1 &&
	       fgets(out + len, sizeof(out) - len, f))
		len += strlen(out + len);
	out[len] = 0;
	if (f)
		pclose(f);
	/* Its record: from its rkey to the next MR's "dev ", on any line. */
	snprintf(key, sizeof(key), "rkey 0x%x ", t->rkey);
	rec = strstr(out, key);
	next = rec ? strstr(rec, "dev ") : NULL;
	if (next)
		*next = 0;
	p = rec ? strstr(rec, "drv_odp_faults ") : NULL;
	found = rec && strstr(rec, "drv_type odp") && p &&
		sscanf(p, "drv_odp_faults %lu", &n) == 1 && n > 0;
	if (!found)
		diag("rdma -dd res show mr:\n%s", rec ? rec : out);
	check(found, "rdma -dd res show mr: type odp, odp_faults %lu", n);
	ibv_dereg_mr(t);
	munmap(tb, ODP_LEN);
}

/* ---------------------------------------------------------- implicit ODP */

/*
 * Implicit ODP: one MR over the whole address space, ibv_reg_mr(pd, NULL,
 * SIZE_MAX, ...).  sroce keeps its pages in children of CHILD bytes,
 * aligned (odp_implicit.h), made when an access first reaches them: the
 * accesses below start CHILD / 2 before a boundary of fresh mappings, so
 * that each spans two children neither of which exists yet.
 */
#define CHILD		(16UL << 20)
#define CHILD_CAP	1024		/* SROCE_ODP_CHILDREN_MAX */

/* A fresh mapping of @n children, aligned to one: its start. */
static char *imr_map(size_t n, void **base, size_t *len)
{
	*len = (n + 1) * CHILD;
	*base = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (*base == MAP_FAILED)
		bail("mmap of %zu children", n);
	return (char *)(((uintptr_t)*base + CHILD - 1) & ~(CHILD - 1));
}

/* WRITE, READ, SEND, atomics into and out of fresh implicit ODP memory. */
static void imr_data(struct ibv_mr *im, char *r)
{
	uint64_t c0[C_N], c1[C_N];
	char *x, *y;

	counters(c0);
	x = r + CHILD - BIG / 2;
	fill(pa.lbuf, BIG, 81);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)x, im->rkey, 0, 0) == 0 &&
	      same(x, 81, BIG),
	      "implicit: WRITE 64 KiB across two new children, every byte");
	x = r + 2 * CHILD - BIG / 2;
	fill(x, BIG, 82);	/* the CPU's pages, not the MR's */
	memset(pa.lbuf, 0, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)x, im->rkey, 0, 0) == 0 && same(pa.lbuf, 82, BIG),
	      "implicit: READ 64 KiB out of it across two children");
	memset(pa.lbuf, 0x77, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)r + (4 << 20), im->rkey, 0, 0) == 0 &&
	      all_bytes(pa.lbuf, 0, BIG),
	      "implicit: READ of never touched memory brings zeros");

	x = r + 2 * CHILD + (1 << 20);
	fill(x, BIG, 83);
	memset(buf1, 0, BIG);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)x, BIG, im->lkey,
		  (uintptr_t)buf1, tmr->rkey, 0, 0) == 0 && same(buf1, 83, BIG),
	      "implicit: WRITE out of it by lkey (requester faults)");
	x = r + 3 * CHILD - BIG / 2;
	fill(buf1, BIG, 84);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)x, BIG, im->lkey,
		  (uintptr_t)buf1, tmr->rkey, 0, 0) == 0 && same(x, 84, BIG),
	      "implicit: READ into it by lkey across two children (completer)");
	x = r + CHILD + (5 << 20);
	y = r + CHILD - MSG / 2;
	fill(x, MSG, 85);
	check(send1(&pa, (uintptr_t)x, im->lkey, (uintptr_t)y, im->lkey,
		    MSG) == 0 && same(y, 85, MSG),
	      "implicit: SEND out of it into a receive across two children");
	x = r + 2 * CHILD + (6 << 20);
	y = r + (7 << 20);
	check(wr1(&pa, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)y, 8, im->lkey,
		  (uintptr_t)x, im->rkey, 9, 0) == 0 &&
	      *(uint64_t *)x == 9 && *(uint64_t *)y == 0,
	      "implicit: FETCH_ADD on it, the old value into it");
	counters(c1);
	diag("misses %" PRIu64 " faults %" PRIu64 " children %" PRIu64
	     " rnr_nak_sent %" PRIu64, c1[C_MISS] - c0[C_MISS],
	     c1[C_FAULT] - c0[C_FAULT], c1[C_CHILD] - c0[C_CHILD],
	     c1[C_RNR] - c0[C_RNR]);
	check(c1[C_MISS] > c0[C_MISS] && c1[C_FAULT] > c0[C_FAULT] &&
	      c1[C_CHILD] >= c0[C_CHILD] + 3 && c1[C_RNR] > c0[C_RNR] &&
	      c1[C_ERR] == c0[C_ERR],
	      "implicit: counters: misses, faults, children made; no errors");
}

/* The MM takes pages and a whole child's mapping away. */
static void imr_invalidate(struct ibv_mr *im, char *r)
{
	uint64_t c0[C_N], c1[C_N];
	char *x = r + CHILD - BIG / 2;

	check(!madvise(x, BIG, MADV_DONTNEED), "implicit: madvise(DONTNEED)");
	memset(pa.lbuf, 0x77, BIG);
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, BIG, pa.lmr->lkey,
		  (uintptr_t)x, im->rkey, 0, 0) == 0 &&
	      all_bytes(pa.lbuf, 0, BIG),
	      "implicit: READ after it brings the new (zero) pages");

	counters(c0);
	check(!munmap(r + CHILD, CHILD), "implicit: munmap of a whole child");
	x = r + CHILD;
	odp_unmapped(im, x, "implicit (a whole child): ");
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, MSG,
		  pa.lmr->lkey, 0xffff888000000000ULL, im->rkey, 0, 0) ==
	      IBV_WC_REM_ACCESS_ERR,
	      "implicit: WRITE above the user address space: remote access error");
	check(wr1(&pa, IBV_WR_RDMA_READ, (uintptr_t)pa.lbuf, MSG, pa.lmr->lkey,
		  UINT64_MAX - 100, im->rkey, 0, 0) == IBV_WC_REM_ACCESS_ERR,
	      "implicit: READ wrapping past 2^64: remote access error");
	counters(c1);
	check(c1[C_ERR] >= c0[C_ERR] + 4 && c1[C_INVAL] > c0[C_INVAL],
	      "implicit: odp_fault_errors and odp_invalidations moved");
	fill(pa.lbuf, MSG, 86);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, MSG,
		  pa.lmr->lkey, (uintptr_t)r + 8192, im->rkey, 0, 0) == 0 &&
	      same(r + 8192, 86, MSG),
	      "implicit: the QP, connected again, still works with the MR");
}

/* advise_mr on the implicit MR: children made by the prefetch. */
static void imr_advise(struct ibv_mr *im)
{
	uint64_t c0[C_N], c1[C_N];
	struct ibv_sge sge;
	size_t len;
	void *base;
	char *q;

	q = imr_map(2, &base, &len);
	counters(c0);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q + CHILD - 128 * 1024,
				.length = 256 * 1024, .lkey = im->lkey };
	check_errno(advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0,
		    "implicit: advise_mr PREFETCH_WRITE, FLUSH across children");
	fill(pa.lbuf, BIG, 87);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)q + CHILD - BIG / 2, im->rkey, 0,
		  0) == 0 && same(q + CHILD - BIG / 2, 87, BIG),
	      "implicit: WRITE into the prefetched range");
	counters(c1);
	check(c1[C_PREFETCH] == c0[C_PREFETCH] + 1 &&
	      c1[C_CHILD] == c0[C_CHILD] + 2 && c1[C_MISS] == c0[C_MISS] &&
	      c1[C_FAULT] == c0[C_FAULT],
	      "implicit: one prefetch, two children, no data path miss (%"
	      PRIu64 " %" PRIu64 " %" PRIu64 ")",
	      c1[C_PREFETCH] - c0[C_PREFETCH], c1[C_CHILD] - c0[C_CHILD],
	      c1[C_MISS] - c0[C_MISS]);
	sge.addr = (uintptr_t)q + (4 << 20);
	check_errno(advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1),
		    0, "implicit: advise_mr PREFETCH, asynchronous");
	check(await_prefetches(c0[C_PREFETCH] + 2),
	      "implicit: the asynchronous prefetch is done by the work item");
	sge.addr = 0xffff888000000000ULL;
	check_errno(advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), EFAULT,
		    "implicit: advise_mr above the user address space");
	sge.addr = (uintptr_t)q;
	check_errno(advise(pb.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), ENOENT,
		    "implicit: advise_mr on another PD's implicit MR");
	munmap(base, len);
}

/*
 * The device's cap on children: one page prefetched in each of more
 * children than it allows is refused past the cap; once their memory
 * is unmapped, the children go and new ones can be made.
 */
static void imr_cap(struct ibv_mr *im)
{
	size_t i, n = CHILD_CAP + 8, len, done = 0;
	uint64_t c0[C_N], c1[C_N];
	struct ibv_sge sge;
	int err = 0, last = 0;
	void *base;
	double end;
	char *q;

	q = imr_map(n, &base, &len);
	/*
	 * One 4 KiB page each, not a transparent huge page: 4 MiB, not
	 * 2 GiB (EINVAL: a kernel without THP, such as the debug kernel).
	 */
	if (madvise(base, len, MADV_NOHUGEPAGE) && errno != EINVAL)
		bail("madvise(MADV_NOHUGEPAGE)");
	counters(c0);
	for (i = 0; i < n; i++) {
		sge = (struct ibv_sge){ .addr = (uintptr_t)q + i * CHILD,
					.length = 4096, .lkey = im->lkey };
		last = advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			      IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		if (!last)
			done++;
		else if (!err)
			err = last;
	}
	counters(c1);
	diag("prefetched %zu of %zu children; first error %d (%s); refused %"
	     PRIu64, done, n, err, strerror(err), c1[C_REFUSED] - c0[C_REFUSED]);
	check(done > CHILD_CAP - 16 && done <= CHILD_CAP && err == EFAULT &&
	      c1[C_REFUSED] >= c0[C_REFUSED] + n - done,
	      "implicit: children past the device's cap refused and counted");
	check(!munmap(base, len), "implicit: munmap of all those children");
	q = imr_map(1, &base, &len);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q, .length = 4096,
				.lkey = im->lkey };
	/* The emptied children go in a work item: give it a moment. */
	for (end = now() + 10; now() < end; usleep(10000)) {
		last = advise(pa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			      IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		if (!last)
			break;
	}
	check_errno(last, 0, "implicit: after the munmap a child can be made");
	munmap(base, len);
}

/*
 * Churn: a thread takes the memory of two children away over and over
 * while WRITEs and READs across their boundary run through the implicit
 * MR, as target and as local SGE: the children are reaped, made again
 * and faulted under the traffic.  Every work request must complete (no
 * hang, no crash).  With MADV_DONTNEED the memory stays mapped, and most
 * complete successfully; not all need to: a fault that hmm cannot
 * finish within its second because the MM keeps invalidating the range
 * fails (-EBUSY), and a READ whose responses keep losing their pages
 * may run out of its retries (the slow TCG VM gets there).  With munmap
 * and mmap again an access may also fail with a remote access or local
 * protection error when it falls into the gap.  Afterwards the MR works,
 * byte for byte.
 */
static char *churn_at;
static bool churn_unmap;

/* Sets mover_done if it failed (and stopped). */
static void *churner(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (!churn_unmap) {
			if (madvise(churn_at, 2 * CHILD, MADV_DONTNEED))
				break;
		} else {
			if (munmap(churn_at, 2 * CHILD))
				break;
			usleep(1000);
			if (mmap(churn_at, 2 * CHILD, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
				 0) == MAP_FAILED)
				break;
		}
		/*
		 * Not faster: the responder checks a READ's whole range
		 * before it accepts it, and churn at every RNR retry (a
		 * slow VM's) would keep a READ waiting for good.
		 */
		usleep(50000);
	}
	if (!atomic_load(&stop))
		atomic_store(&mover_done, true);
	return NULL;
}

/* @n accesses under the churn: how many completed, failed, went wrong. */
static void churn_run(struct ibv_mr *im, unsigned int n, unsigned int *good,
		      unsigned int *refused, unsigned int *other)
{
	char *x = churn_at + CHILD - BIG / 2;
	unsigned int i;
	pthread_t th;
	int st;

	*good = *refused = *other = 0;
	atomic_store(&stop, false);
	atomic_store(&mover_done, false);
	if (pthread_create(&th, NULL, churner, NULL))
		bail("pthread_create");
	for (i = 0; i < n && !atomic_load(&mover_done); i++) {
		if (i % 3 == 2)
			st = wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)x, BIG,
				 im->lkey, (uintptr_t)buf1, tmr->rkey, 0, 0);
		else
			st = wr1(&pa, i % 3 ? IBV_WR_RDMA_READ :
				 IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
				 pa.lmr->lkey, (uintptr_t)x, im->rkey, 0, 0);
		if (!st)
			(*good)++;
		else if (st == IBV_WC_REM_ACCESS_ERR ||
			 st == IBV_WC_LOC_PROT_ERR ||
			 st == IBV_WC_RETRY_EXC_ERR)
			(*refused)++;
		else
			(*other)++;
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
}

static void imr_churn(struct ibv_mr *im)
{
	unsigned int good, refused, other;
	uint64_t c0[C_N], c1[C_N];
	size_t len;
	void *base;
	char *x;

	churn_at = imr_map(2, &base, &len);
	x = churn_at + CHILD - BIG / 2;
	counters(c0);
	churn_unmap = false;
	churn_run(im, 30, &good, &refused, &other);
	counters(c1);
	diag("churn (madvise): %u done, %u errors, %u other; faults %"
	     PRIu64 " children %" PRIu64 " invalidations %" PRIu64, good,
	     refused, other, c1[C_FAULT] - c0[C_FAULT],
	     c1[C_CHILD] - c0[C_CHILD], c1[C_INVAL] - c0[C_INVAL]);
	check(good >= 15 && !other && !atomic_load(&mover_done),
	      "implicit: 30 WRITE/READ while MADV_DONTNEED empties the "
	      "children: all complete, most of them successfully");
	churn_unmap = true;
	churn_run(im, 30, &good, &refused, &other);
	diag("churn (munmap): %u done, %u errors, %u other", good,
	     refused, other);
	check(!other && !atomic_load(&mover_done),
	      "implicit: 30 WRITE/READ while munmap and mmap churn: each "
	      "completes, or fails with an access or retry error");
	fill(pa.lbuf, BIG, 88);
	check(wr1(&pa, IBV_WR_RDMA_WRITE, (uintptr_t)pa.lbuf, BIG,
		  pa.lmr->lkey, (uintptr_t)x, im->rkey, 0, 0) == 0 &&
	      same(x, 88, BIG), "implicit: after the churn, WRITE lands whole");
	munmap(base, len);
}

static void case_odp_implicit(void)
{
	struct ibv_mr *im;
	size_t len;
	void *base;
	char *r;

	errno = 0;
	im = ibv_reg_mr(pa.pd, NULL, SIZE_MAX, ACC_ODP);
	if (!check(im && im->lkey == im->rkey,
		   "implicit ODP MR (address 0, length SIZE_MAX) registered (%s)",
		   im ? "ok" : strerror(errno)))
		return;
	r = imr_map(3, &base, &len);
	imr_data(im, r);
	imr_invalidate(im, r);
	imr_advise(im);
	imr_cap(im);
	imr_churn(im);
	/* Deregistered with children still there (what is left of r). */
	check(!ibv_dereg_mr(im), "implicit: dereg with children in place");
	munmap(base, len);
}

static void mode_odp(void)
{
	case_odp_caps();
	case_odp_errors();
	case_odp_data();
	case_odp_invalidate();
	case_odp_advise();
	case_odp_fork();
	case_odp_restrack();
	case_odp_implicit();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int c;

	if (strcmp(mode, "rereg") && strcmp(mode, "dmabuf") &&
	    strcmp(mode, "odp"))
		bail("usage: %s rereg|dmabuf|odp -d DEV -g GIDX [-n CYCLES] [-U]",
		     argv[0]);
	optind = 2;
	while ((c = getopt(argc, argv, "d:g:n:U")) != -1) {
		switch (c) {
		case 'd':
			dev_name = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'n':
			cycles = atoi(optarg);
			break;
		case 'U':
			no_udmabuf = true;
			break;
		default:
			return 2;
		}
	}
	if (!dev_name || gid_index < 0)
		bail("-d DEV -g GIDX needed");
	ctx = open_ctx(dev_name);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid))
		bail("open %s, gid %d", dev_name, gid_index);
	pair_open(&pa);
	pair_open(&pb);
	buf1 = map_buf();
	buf2 = map_buf();
	tmr = ibv_reg_mr(pa.pd, buf1, LEN, ACC_RW);
	if (!tmr)
		bail("reg_mr");
	if (!strcmp(mode, "dmabuf")) {
		mode_dmabuf();
		return tap_done();
	}
	if (!strcmp(mode, "odp")) {
		mode_odp();
		return tap_done();
	}

	errno = 0;
	c = ibv_rereg_mr(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			 ACC_RW);
	diag("ibv_rereg_mr() of this libibverbs and provider: %d, errno %d (%s)",
	     c, errno, strerror(errno));
	case_trans();
	case_access();
	case_pd();
	case_errors();
	case_inflight();
	return tap_done();
}
