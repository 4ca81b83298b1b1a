/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packets out (tx.c): the one place a packet leaves the driver.
 *
 * sroce_tx_alloc() returns an empty skb with room for @len bytes in its
 * linear part, plus the headers below and the trailer after; the caller
 * skb_put()s the BTH, extension headers and a small payload there, or
 * attaches a larger payload as frags (sroce_tx_add_page(),
 * sroce_tx_put_frag(), or the memory helpers in mem.h).  Then sroce_tx()
 * adds the pad, UDP/IP and the ICRC, and sends or loops the packet back.
 * sroce_tx() always consumes the skb; it returns -ENOBUFS when the local
 * netdev's queue was full, having set SROCE_QPF_TX_FULL: the packet did
 * not leave, and the caller should put its state back so that the engine
 * sends it again after a pause.
 *
 * Context: any but hard interrupts; sroce_tx() runs in the QP's engine.
 */
#ifndef SROCE_TX_H
#define SROCE_TX_H

#include <linux/types.h>

struct page;
struct sk_buff;
struct sroce_av;
struct sroce_qp;

/* Payloads up to this size are copied into a packet rather than attached */
#define SROCE_TX_COPY_MAX	256
/*
 * A packet the local netdev's queue had no room for is sent again after
 * a pause, this long times the number of tries, up to SROCE_TX_FULL_TRIES
 * tries in a row (7 ms in all); after that the queue is taken for a lossy
 * wire (a veth whose peer is down drops everything) and the packet is
 * left to the retransmit timer.
 */
#define SROCE_TX_FULL_PAUSE_US	50
#define SROCE_TX_FULL_TRIES	16

struct sk_buff *sroce_tx_alloc(struct sroce_qp *qp, unsigned int len);
bool sroce_tx_add_page(struct sk_buff *skb, struct page *page,
		       unsigned int off, unsigned int len);
void *sroce_tx_put_frag(struct sk_buff *skb, unsigned int len);
int sroce_tx(struct sroce_qp *qp, const struct sroce_av *av,
	     struct sk_buff *skb);
int sroce_tx_rxe_flush(struct sroce_qp *qp, const struct sroce_av *av,
		       struct sk_buff *skb);
int sroce_tx_qp_init(struct sroce_qp *qp);
void sroce_tx_qp_path_changed(struct sroce_qp *qp);
void sroce_tx_peer_alive(struct sroce_qp *qp);
void sroce_tx_qp_cleanup(struct sroce_qp *qp);
void sroce_tx_exit(void);

#endif /* SROCE_TX_H */
