/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmtime's steps over TCP, for comparing connection set-up through the
 * drop-in librdmacm (doc/guides/rdmacm.rst) with the kernel's TCP on the
 * same host. Not built by meson:
 *
 *   cc -O2 -o tcp_cmtime devtools/tcp_cmtime.c
 *   ./tcp_cmtime -b 7600 &                       # server: accepts, closes at EOF
 *   ./tcp_cmtime -s 127.0.0.1 -p 7600 -c 1000    # client
 *
 * The client does each step for all N connections before the next, as
 * cmtime does: socket(); connect (non-blocking, until every socket is
 * writable, i.e. its handshake is done: cmtime's "connect" ends at
 * ESTABLISHED on the active side); disconnect (shutdown(SHUT_WR), until the
 * server's close reads as end of file on every socket: a DREQ/DREP round
 * trip); close. It prints each step's total and its time per connection.
 * Unlike rdma_cm, TCP completes a connection without the server program:
 * the kernel answers the SYN, accept() comes later.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int
server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct epoll_event ev = { .events = EPOLLIN }, evs[256];
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1, ep = epoll_create1(0);

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 4096) != 0) {
		perror("tcp_cmtime: bind/listen");
		return 1;
	}
	ev.data.fd = l;
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd, c;
			char b[64];
			ssize_t r;

			if (fd == l) {
				while ((c = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					ev.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				}
				continue;
			}
			r = read(fd, b, sizeof(b));
			if (r == 0 || (r < 0 && errno != EAGAIN))
				close(fd);
		}
	}
}

/* Wait until @left of the sockets armed on @ep have had @done say so. */
static int
wait_all(int ep, int *fd, int n, int left, int (*done)(int ep, int fd, uint32_t i))
{
	struct epoll_event *evs = calloc(n, sizeof(*evs));

	while (left > 0) {
		int k = epoll_wait(ep, evs, n, 10000);

		if (k <= 0) {
			free(evs);
			return -1;
		}
		for (int i = 0; i < k; i++)
			left -= done(ep, fd[evs[i].data.u32], evs[i].data.u32);
	}
	free(evs);
	return 0;
}

static int
connected(int ep, int fd, uint32_t i)
{
	int e = 0;
	socklen_t l = sizeof(e);

	(void)ep;
	(void)i;
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
	if (e != 0) {
		fprintf(stderr, "tcp_cmtime: connect: %s\n", strerror(e));
		exit(1);
	}
	return 1;
}

static int
closed(int ep, int fd, uint32_t i)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u32 = i };
	char b[64];
	ssize_t r = read(fd, b, sizeof(b));

	if (r == 0 || (r < 0 && errno != EAGAIN))
		return 1;
	epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
	return 0;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	const char *ip = "127.0.0.1";
	int port = 7471, n = 100, bport = 0, opt, ep, *fd;
	double t[5];

	while ((opt = getopt(argc, argv, "s:p:c:b:")) != -1) {
		switch (opt) {
		case 's': ip = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'c': n = atoi(optarg); break;
		case 'b': bport = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: tcp_cmtime -b <port> | -s <ip> -p <port> -c <n>\n");
			return 1;
		}
	}
	if (bport)
		return server(bport);
	if (n <= 0 || inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		return 1;
	a.sin_port = htons(port);
	fd = calloc(n, sizeof(*fd));
	ep = epoll_create1(0);
	t[0] = now_us();
	for (int i = 0; i < n; i++)
		fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	t[1] = now_us();
	for (int i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLOUT | EPOLLONESHOT, .data.u32 = i };

		if (connect(fd[i], (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
			perror("tcp_cmtime: connect");
			return 1;
		}
		epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev);
	}
	if (wait_all(ep, fd, n, n, connected) != 0) {
		fprintf(stderr, "tcp_cmtime: connect: timed out\n");
		return 1;
	}
	t[2] = now_us();
	for (int i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u32 = i };

		shutdown(fd[i], SHUT_WR);
		epoll_ctl(ep, EPOLL_CTL_MOD, fd[i], &ev);
	}
	if (wait_all(ep, fd, n, n, closed) != 0) {
		fprintf(stderr, "tcp_cmtime: disconnect: timed out\n");
		return 1;
	}
	t[3] = now_us();
	for (int i = 0; i < n; i++)
		close(fd[i]);
	t[4] = now_us();
	printf("step              total ms  us / conn\n");
	printf("socket       : %11.2f %10.2f\n", (t[1] - t[0]) / 1e3, (t[1] - t[0]) / n);
	printf("connect      : %11.2f %10.2f\n", (t[2] - t[1]) / 1e3, (t[2] - t[1]) / n);
	printf("disconnect   : %11.2f %10.2f\n", (t[3] - t[2]) / 1e3, (t[3] - t[2]) / n);
	printf("close        : %11.2f %10.2f\n", (t[4] - t[3]) / 1e3, (t[4] - t[3]) / n);
	printf("all          : %11.2f %10.2f\n", (t[4] - t[0]) / 1e3, (t[4] - t[0]) / n);
	return 0;
}
