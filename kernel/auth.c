// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: peer authentication.
 *
 * The node keeps up to two shared secrets for the whole cluster: the
 * current one and, for a rotation, the previous one for a window of
 * seconds. Each lives only as the key of an HMAC-SHA256 transform (the
 * crypto API frees a transform's memory with kfree_sensitive()); the
 * secret's bytes are never kept, logged or reported. A secret is known by
 * its id, the first 8 bytes of HMAC(secret, "chorus-key-id"), so that two
 * nodes can tell which secret they share without showing it.
 *
 * The handshake (handshake.c) proves knowledge of a shared secret in both
 * directions: Documentation/wire-protocol.rst, "Authentication", gives the
 * messages and the exact input of each HMAC. No secret set means
 * authentication is off, and a node with a secret refuses a peer without
 * one and the other way round.
 *
 * chorus_auth_mutex protects the keys; the handshake computes under it
 * (process context, a few microseconds) and nests it inside the volume,
 * config and session locks. It takes no other lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/unaligned.h>
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/netlink.h>

#include "auth.h"

#define CHORUS_AUTH_LABEL_LEN	16

/* The first bytes of every HMAC input: whose proof it is. */
static const u8 chorus_auth_labels[][CHORUS_AUTH_LABEL_LEN] = {
	[CHORUS_AUTH_ACCEPTOR]	= "chorus-acceptor",
	[CHORUS_AUTH_DIALLER]	= "chorus-dialler",
};

static const u8 chorus_auth_id_label[CHORUS_AUTH_LABEL_LEN] = "chorus-key-id";

/**
 * struct chorus_auth_key - one secret, as a keyed transform
 * @tfm: hmac(sha256) keyed with the secret; NULL for no secret
 * @id: the secret's id, never 0 when @tfm is set
 */
struct chorus_auth_key {
	struct crypto_shash *tfm;
	u64 id;
};

/*
 * chorus_auth_keys[0] is the current secret, [1] the previous one, accepted
 * until chorus_auth_prev_until (jiffies). All under chorus_auth_mutex.
 */
static DEFINE_MUTEX(chorus_auth_mutex);
static struct chorus_auth_key chorus_auth_keys[CHORUS_AUTH_MAX_KEYS];
static unsigned long chorus_auth_prev_until;
static atomic64_t chorus_auth_failures = ATOMIC64_INIT(0);

static void chorus_auth_expire_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(chorus_auth_expire_work, chorus_auth_expire_workfn);

static void chorus_auth_key_free(struct chorus_auth_key *key)
{
	crypto_free_shash(key->tfm);	/* NULL is fine; memory zeroed */
	key->tfm = NULL;
	key->id = 0;
}

/* Key a fresh transform with @secret and work out its id. */
static int chorus_auth_key_make(const u8 *secret, unsigned int len,
				struct chorus_auth_key *key)
{
	u8 digest[CHORUS_AUTH_MAC_LEN];
	struct crypto_shash *tfm;
	int ret;

	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	ret = crypto_shash_setkey(tfm, secret, len);
	if (ret)
		goto free_tfm;
	ret = crypto_shash_tfm_digest(tfm, chorus_auth_id_label,
				      sizeof(chorus_auth_id_label), digest);
	if (ret)
		goto free_tfm;
	key->tfm = tfm;
	key->id = get_unaligned_le64(digest) ?: 1;
	memzero_explicit(digest, sizeof(digest));
	return 0;

free_tfm:
	crypto_free_shash(tfm);
	return ret;
}

/* Whether the previous secret is still accepted. Context: the mutex held. */
static bool chorus_auth_prev_valid(void)
{
	lockdep_assert_held(&chorus_auth_mutex);
	return chorus_auth_keys[1].tfm &&
	       time_before(jiffies, chorus_auth_prev_until);
}

/* The secret with @id, or NULL. Context: chorus_auth_mutex held. */
static struct chorus_auth_key *chorus_auth_find(u64 id)
{
	lockdep_assert_held(&chorus_auth_mutex);
	if (!id)
		return NULL;
	if (chorus_auth_keys[0].tfm && chorus_auth_keys[0].id == id)
		return &chorus_auth_keys[0];
	if (chorus_auth_prev_valid() && chorus_auth_keys[1].id == id)
		return &chorus_auth_keys[1];
	return NULL;
}

static void chorus_auth_expire_workfn(struct work_struct *work)
{
	bool dropped = false;

	mutex_lock(&chorus_auth_mutex);
	if (chorus_auth_keys[1].tfm && !chorus_auth_prev_valid()) {
		chorus_auth_key_free(&chorus_auth_keys[1]);
		dropped = true;
	}
	mutex_unlock(&chorus_auth_mutex);
	if (dropped)
		pr_info("peer authentication: the previous secret's window ended; it is no longer accepted\n");
}

/**
 * chorus_auth_set() - make @secret the node's current peer secret
 * @secret: the secret's bytes, %CHORUS_AUTH_SECRET_MIN to
 *	%CHORUS_AUTH_SECRET_MAX of them (the netlink policy checks)
 * @len: its length
 * @keep_s: 0: the secret it replaces is forgotten at once; else that one
 *	is still accepted for @keep_s seconds (a rotation)
 * @extack: where to say why not
 *
 * Setting the current secret again changes nothing. Connections already
 * established stay: a secret is checked when a connection is made.
 * Context: process context.
 * Return: 0, or a negative errno from the crypto API (nothing changed).
 */
int chorus_auth_set(const u8 *secret, unsigned int len, u32 keep_s,
		    struct netlink_ext_ack *extack)
{
	struct chorus_auth_key key = {};
	struct chorus_auth_key *cur = &chorus_auth_keys[0];
	struct chorus_auth_key *prev = &chorus_auth_keys[1];
	int ret;

	ret = chorus_auth_key_make(secret, len, &key);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot key hmac(sha256) with the secret (crypto API)");
		return ret;
	}
	mutex_lock(&chorus_auth_mutex);
	if (cur->tfm && cur->id == key.id) {
		mutex_unlock(&chorus_auth_mutex);
		chorus_auth_key_free(&key);
		return 0;
	}
	chorus_auth_key_free(prev);
	if (keep_s && cur->tfm) {
		*prev = *cur;
		chorus_auth_prev_until = jiffies + msecs_to_jiffies(keep_s * MSEC_PER_SEC);
		mod_delayed_work(system_wq, &chorus_auth_expire_work,
				 msecs_to_jiffies(keep_s * MSEC_PER_SEC) + 1);
	} else {
		chorus_auth_key_free(cur);
		cancel_delayed_work(&chorus_auth_expire_work);
	}
	*cur = key;
	mutex_unlock(&chorus_auth_mutex);
	if (keep_s)
		pr_info("peer authentication: new secret %016llx; the previous one is accepted for %u s more\n",
			key.id, keep_s);
	else
		pr_info("peer authentication: secret %016llx set\n", key.id);
	return 0;
}

/**
 * chorus_auth_drop_previous() - stop accepting the previous secret now
 *
 * Context: process context.
 */
void chorus_auth_drop_previous(void)
{
	mutex_lock(&chorus_auth_mutex);
	chorus_auth_key_free(&chorus_auth_keys[1]);
	cancel_delayed_work(&chorus_auth_expire_work);
	mutex_unlock(&chorus_auth_mutex);
	pr_info("peer authentication: previous secret dropped\n");
}

/**
 * chorus_auth_clear() - forget every secret: authentication off
 *
 * Context: process context.
 */
void chorus_auth_clear(void)
{
	mutex_lock(&chorus_auth_mutex);
	chorus_auth_key_free(&chorus_auth_keys[0]);
	chorus_auth_key_free(&chorus_auth_keys[1]);
	cancel_delayed_work(&chorus_auth_expire_work);
	mutex_unlock(&chorus_auth_mutex);
	pr_info("peer authentication: secrets cleared, authentication off\n");
}

/**
 * chorus_auth_get() - the secrets' ids and the failure count
 * @info: filled in
 *
 * Context: process context.
 */
void chorus_auth_get(struct chorus_auth_info *info)
{
	memset(info, 0, sizeof(*info));
	mutex_lock(&chorus_auth_mutex);
	info->key_id = chorus_auth_keys[0].id;
	if (chorus_auth_prev_valid()) {
		info->prev_key_id = chorus_auth_keys[1].id;
		info->prev_remaining_s =
			DIV_ROUND_UP(jiffies_to_msecs(chorus_auth_prev_until -
						      jiffies), MSEC_PER_SEC);
	}
	mutex_unlock(&chorus_auth_mutex);
	info->failures = atomic64_read(&chorus_auth_failures);
}

/**
 * chorus_auth_exit() - forget the secrets, at module exit
 *
 * Context: process context, once no netlink request and no handshake can
 * run (after the family is unregistered and the transports are gone).
 */
void chorus_auth_exit(void)
{
	cancel_delayed_work_sync(&chorus_auth_expire_work);
	mutex_lock(&chorus_auth_mutex);
	chorus_auth_key_free(&chorus_auth_keys[0]);
	chorus_auth_key_free(&chorus_auth_keys[1]);
	mutex_unlock(&chorus_auth_mutex);
}

/**
 * chorus_auth_enabled() - whether the node has a peer secret
 *
 * Context: process context.
 * Return: true when it has one: every connection must authenticate.
 */
bool chorus_auth_enabled(void)
{
	bool on;

	mutex_lock(&chorus_auth_mutex);
	on = chorus_auth_keys[0].tfm;
	mutex_unlock(&chorus_auth_mutex);
	return on;
}

/**
 * chorus_auth_offer() - fill a HELLO's authentication part
 * @a: filled with a fresh nonce and the ids of the node's secrets
 *
 * Context: process context.
 * Return: true when the node has a secret (the HELLO carries @a), false
 * when authentication is off.
 */
bool chorus_auth_offer(struct chorus_wire_hello_auth *a)
{
	bool on;

	memset(a, 0, sizeof(*a));
	get_random_bytes(a->nonce, sizeof(a->nonce));
	mutex_lock(&chorus_auth_mutex);
	on = chorus_auth_keys[0].tfm;
	a->key_ids[0] = cpu_to_le64(chorus_auth_keys[0].id);
	if (chorus_auth_prev_valid())
		a->key_ids[1] = cpu_to_le64(chorus_auth_keys[1].id);
	mutex_unlock(&chorus_auth_mutex);
	return on;
}

/**
 * chorus_auth_choose() - the secret to prove with, of those a HELLO offers
 * @offered: the HELLO's authentication part, checked
 *	(chorus_wire_check_hello_auth())
 *
 * Prefers the node's current secret to its previous one.
 * Context: process context.
 * Return: the id of a secret both nodes have, or 0 when they share none.
 */
u64 chorus_auth_choose(const struct chorus_wire_hello_auth *offered)
{
	u64 ids[] = { le64_to_cpu(offered->key_ids[0]),
		      le64_to_cpu(offered->key_ids[1]) };
	u64 chosen = 0;
	int i, k;

	mutex_lock(&chorus_auth_mutex);
	for (i = 0; i < CHORUS_AUTH_MAX_KEYS && !chosen; i++) {
		if (!chorus_auth_keys[i].tfm ||
		    (i == 1 && !chorus_auth_prev_valid()))
			continue;
		for (k = 0; k < ARRAY_SIZE(ids); k++)
			if (ids[k] && ids[k] == chorus_auth_keys[i].id)
				chosen = ids[k];
	}
	mutex_unlock(&chorus_auth_mutex);
	return chosen;
}

/**
 * chorus_auth_mac() - compute one side's proof for a connection
 * @key_id: the secret to use (the one the HELLO_ACK names)
 * @label: whose proof
 * @hello: the HELLO's payload as sent, with its authentication part
 * @ack: the HELLO_ACK's payload; its mac is taken as zero whatever it holds
 * @mac: filled with the %CHORUS_AUTH_MAC_LEN byte HMAC
 *
 * The input is the 16-byte label, then the 176 bytes of @hello, then the
 * 176 bytes of @ack with the mac zeroed: both nonces, both nodes' ids, the
 * volume, the connection index, the session id, everything the two said.
 * Context: process context.
 * Return: 0, -ENOKEY when the node no longer has that secret, or an
 * error of the crypto API.
 */
int chorus_auth_mac(u64 key_id, enum chorus_auth_label label,
		    const struct chorus_wire_hello_full *hello,
		    const struct chorus_wire_hello_full *ack, u8 *mac)
{
	static const u8 zero[CHORUS_AUTH_MAC_LEN];
	struct chorus_auth_key *key;
	int ret = -ENOKEY;

	mutex_lock(&chorus_auth_mutex);
	key = chorus_auth_find(key_id);
	if (key) {
		SHASH_DESC_ON_STACK(desc, key->tfm);

		desc->tfm = key->tfm;
		ret = crypto_shash_init(desc) ?:
		      crypto_shash_update(desc, chorus_auth_labels[label],
					  CHORUS_AUTH_LABEL_LEN) ?:
		      crypto_shash_update(desc, (const u8 *)hello,
					  sizeof(*hello)) ?:
		      crypto_shash_update(desc, (const u8 *)ack,
					  offsetof(typeof(*ack), auth.mac)) ?:
		      crypto_shash_update(desc, zero, sizeof(zero)) ?:
		      crypto_shash_final(desc, mac);
		shash_desc_zero(desc);
	}
	mutex_unlock(&chorus_auth_mutex);
	return ret;
}

/**
 * chorus_auth_verify() - check the other side's proof
 * @key_id: the secret named in the HELLO_ACK
 * @label: whose proof it claims to be
 * @hello: the HELLO's payload
 * @ack: the HELLO_ACK's payload
 * @mac: the proof received
 *
 * Context: process context.
 * Return: 0 when @mac is right, -EKEYREJECTED when it is not, -ENOKEY or
 * a crypto error when it cannot be computed.
 */
int chorus_auth_verify(u64 key_id, enum chorus_auth_label label,
		       const struct chorus_wire_hello_full *hello,
		       const struct chorus_wire_hello_full *ack,
		       const u8 *mac)
{
	u8 want[CHORUS_AUTH_MAC_LEN];
	int ret;

	ret = chorus_auth_mac(key_id, label, hello, ack, want);
	if (!ret && crypto_memneq(want, mac, sizeof(want)))
		ret = -EKEYREJECTED;
	memzero_explicit(want, sizeof(want));
	return ret;
}

/**
 * chorus_auth_count_failure() - count a connection refused by authentication
 *
 * Context: any.
 */
void chorus_auth_count_failure(void)
{
	atomic64_inc(&chorus_auth_failures);
}

static bool chorus_addr_v6(const struct sockaddr_storage *ss,
			   struct in6_addr *out)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	switch (ss->ss_family) {
	case AF_INET:
		ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, out);
		return true;
	case AF_INET6:
		*out = sin6->sin6_addr;
		return true;
	default:
		return false;
	}
}

/**
 * chorus_addr_same_host() - whether two socket addresses name one host
 * @a: an address
 * @b: another
 *
 * Compares the IP addresses only, not the ports; an IPv4 address and its
 * IPv4-mapped IPv6 form are the same host.
 * Context: any.
 * Return: true when they are the same.
 */
bool chorus_addr_same_host(const struct sockaddr_storage *a,
			   const struct sockaddr_storage *b)
{
	struct in6_addr x, y;

	return chorus_addr_v6(a, &x) && chorus_addr_v6(b, &y) &&
	       ipv6_addr_equal(&x, &y);
}
