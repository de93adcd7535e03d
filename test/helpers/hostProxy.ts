/**
 * Test helper: an HTTP proxy that stands in for DNS. A prober configured with it (blackbox_exporter's
 * `proxy_url`) reaches every host name through it: `CONNECT host:443` (HTTPS) is tunnelled to the
 * local port `route(host, true)` names, and a plain `GET http://host/...` to `route(host, false)`; a host without
 * a route gets 502, as an unresolvable one fails. The sites' own names travel unchanged (SNI, Host).
 */
import { request, createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";

export interface HostProxy {
  url: string;
  close(): Promise<void>;
}

/** The local port serving `host` over TLS (`CONNECT`) or plain HTTP, or undefined: no such host. */
export type Route = (host: string, tls: boolean) => number | undefined;

export async function startHostProxy(route: Route): Promise<HostProxy> {
  const server: Server = createServer((req, res) => {
    const target = req.url ? new URL(req.url) : undefined;
    const port = target ? route(target.hostname, false) : undefined;
    if (!target || port === undefined) {
      res.writeHead(502).end("no route");
      return;
    }
    const upstream = request(
      {
        host: "127.0.0.1",
        port,
        method: req.method,
        path: target.pathname + target.search,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.headersSent || res.writeHead(502).end("upstream failed"));
    req.pipe(upstream);
  });
  server.on("connect", (req, client, head) => {
    const [host] = (req.url ?? "").split(":");
    const port = route(host ?? "", true);
    if (port === undefined) {
      client.end("HTTP/1.1 502 No Route\r\n\r\n");
      return;
    }
    const upstream = connect(port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.end("HTTP/1.1 502 Upstream Refused\r\n\r\n"));
    client.on("error", () => upstream.destroy());
  });
  // Tunnels are no longer the server's connections: closing it waits for them unless destroyed.
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
