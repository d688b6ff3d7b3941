// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the map from &enum chorus_transport
 * to each transport's ops, and what is done to all transports at once:
 * module init and exit, listen and unlisten. See transport.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <net/netlink.h>

#include "chorus.h"

/* In the order they start listening; they stop in the reverse order. */
static const struct chorus_transport_ops *const chorus_transports[] = {
	&chorus_tcp_ops,
	&chorus_rdma_ops,
};

static DEFINE_MUTEX(chorus_listen_mutex);
static bool chorus_listening;	/* under chorus_listen_mutex */

/**
 * chorus_transport() - the ops of a transport
 * @transport: %CHORUS_TRANSPORT_TCP or %CHORUS_TRANSPORT_RDMA
 *
 * Return: its ops, or NULL for any other value.
 */
const struct chorus_transport_ops *chorus_transport(u32 transport)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(chorus_transports); i++)
		if (chorus_transports[i]->transport == transport)
			return chorus_transports[i];
	return NULL;
}

/**
 * chorus_transports_init() - module init of every transport
 *
 * Return: 0, or a negative errno with no transport left initialised.
 */
int chorus_transports_init(void)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(chorus_transports); i++) {
		ret = chorus_transports[i]->init();
		if (ret)
			goto exit_started;
	}
	return 0;

exit_started:
	while (--i >= 0)
		chorus_transports[i]->exit();
	return ret;
}

/**
 * chorus_transports_exit() - module exit of every transport
 *
 * Context: after chorus_transports_unlisten(), every connection freed.
 */
void chorus_transports_exit(void)
{
	int i;

	for (i = ARRAY_SIZE(chorus_transports) - 1; i >= 0; i--)
		chorus_transports[i]->exit();
}

/**
 * chorus_transports_listen() - accept replication connections at @addr over
 * every transport
 * @addr: address and port
 * @extack: where to say what failed
 *
 * Context: process context.
 * Return: 0, -EBUSY when already listening, or the first transport's error
 * (and then none listens).
 */
int chorus_transports_listen(const struct sockaddr_storage *addr,
			     struct netlink_ext_ack *extack)
{
	int i, ret = 0;

	mutex_lock(&chorus_listen_mutex);
	if (chorus_listening) {
		NL_SET_ERR_MSG(extack, "already listening: unlisten first");
		ret = -EBUSY;
		goto unlock;
	}
	for (i = 0; i < ARRAY_SIZE(chorus_transports); i++) {
		ret = chorus_transports[i]->listen(addr, extack);
		if (ret)
			goto unlisten_started;
	}
	chorus_listening = true;
	goto unlock;

unlisten_started:
	while (--i >= 0)
		chorus_transports[i]->unlisten();
unlock:
	mutex_unlock(&chorus_listen_mutex);
	return ret;
}

/**
 * chorus_transports_unlisten() - stop accepting; finish handshakes under way
 *
 * Harmless when not listening.
 * Context: process context; not under chorus_volumes_lock, which the
 * handshakes take.
 */
void chorus_transports_unlisten(void)
{
	int i;

	mutex_lock(&chorus_listen_mutex);
	if (chorus_listening)
		for (i = ARRAY_SIZE(chorus_transports) - 1; i >= 0; i--)
			chorus_transports[i]->unlisten();
	chorus_listening = false;
	mutex_unlock(&chorus_listen_mutex);
}
