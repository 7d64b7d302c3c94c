package io.hivebridge.spark;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.hive.service.CompositeService;
import org.apache.hive.service.Service;
import org.apache.hive.service.cli.CLIService;
import org.apache.hive.service.cli.SessionHandle;
import org.apache.hive.service.cli.operation.Operation;
import org.apache.hive.service.cli.operation.OperationManager;
import org.apache.hive.service.cli.thrift.ThriftBinaryCLIService;
import org.apache.hive.service.cli.thrift.ThriftCLIService;
import org.apache.hive.service.rpc.thrift.TCLIService;
import org.apache.hive.service.rpc.thrift.TGetOperationStatusResp;
import org.apache.hive.service.rpc.thrift.TStatus;
import org.apache.thrift.TBaseProcessor;
import org.apache.thrift.TProcessor;
import org.apache.thrift.TProcessorFactory;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.server.ServerContext;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TServerEventHandler;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@code hive-bridge serve} adds to Spark's Thrift Server (binary transport), installed after it started:
 *
 * <ul>
 *   <li><b>A dropped client frees its work.</b> A statement a client runs synchronously (pyhive, ODBC drivers)
 *       runs in its connection's thread, so Spark's server notices a closed connection only once the statement
 *       ends. Here every connection's socket is tracked, and a watch thread reads the kernel's table of this
 *       process's TCP connections ({@code /proc/self/net/tcp}, {@code tcp6}) every {@code pollMillis}: a
 *       connection no longer established (the client closed or was killed) has its session's statements
 *       cancelled (their Spark job groups cancelled) and its session closed. Where the table cannot be read (not
 *       Linux) the watch does nothing and Spark's own behaviour stays.</li>
 *   <li><b>No Java stack traces to clients.</b> Every response's status loses its {@code infoMessages} (Hive's
 *       encoded stack trace), and an operation's error message is cut before its first stack frame; clients
 *       get the message and SQLSTATE, the server's log keeps the trace.</li>
 * </ul>
 */
public final class ThriftGuard {
  private static final Logger LOG = LoggerFactory.getLogger(ThriftGuard.class);
  private static final String ESTABLISHED = "01";

  private ThriftGuard() {}

  /** One client connection: its socket, and whether its session was closed already (by the watch or Spark). */
  private static final class Connection {
    final Socket socket;
    final AtomicBoolean closed = new AtomicBoolean();

    Connection(Socket socket) {
      this.socket = socket;
    }
  }

  /**
   * Install both on {@code hiveServer2} (what {@code HiveThriftServer2.startWithContext} returns); returns false
   * when it has no binary transport (HTTP mode: nothing is changed).
   */
  public static boolean install(Object hiveServer2, long pollMillis) throws ReflectiveOperationException {
    ThriftBinaryCLIService binary = null;
    for (Service s : ((CompositeService) hiveServer2).getServices()) {
      if (s instanceof ThriftBinaryCLIService) {
        binary = (ThriftBinaryCLIService) s;
      }
    }
    if (binary == null) {
      return false;
    }
    TServer server = (TServer) field(ThriftBinaryCLIService.class, "server").get(binary);
    CLIService cli = (CLIService) field(ThriftCLIService.class, "cliService").get(binary);
    TCLIService.Iface quiet = quiet(binary);
    TProcessorFactory processors = (TProcessorFactory) field(TServer.class, "processorFactory_").get(server);
    Field iface = field(TBaseProcessor.class, "iface");
    field(TServer.class, "processorFactory_").set(server, new TProcessorFactory(null) {
      @Override
      public TProcessor getProcessor(TTransport transport) {
        TProcessor processor = processors.getProcessor(transport);
        if (processor instanceof TBaseProcessor) {
          try {
            iface.set(processor, quiet);
          } catch (IllegalAccessException e) {
            LOG.warn("cannot keep stack traces from this connection's client", e);
          }
        }
        return processor;
      }

      @Override
      public boolean isAsyncProcessor() {
        return processors.isAsyncProcessor();
      }
    });
    Map<ServerContext, Connection> connections = new ConcurrentHashMap<>();
    TServerEventHandler events = server.getEventHandler();
    if (events == null) {
      return true;
    }
    server.setServerEventHandler(new TServerEventHandler() {
      @Override
      public void preServe() {
        events.preServe();
      }

      @Override
      public ServerContext createContext(TProtocol input, TProtocol output) {
        ServerContext context = events.createContext(input, output);
        Socket socket = socketOf(input.getTransport());
        if (context != null && socket != null) {
          connections.put(context, new Connection(socket));
        }
        return context;
      }

      @Override
      public void deleteContext(ServerContext context, TProtocol input, TProtocol output) {
        Connection c = context == null ? null : connections.remove(context);
        if (c == null || c.closed.compareAndSet(false, true)) {
          events.deleteContext(context, input, output);
        }
      }

      @Override
      public void processContext(ServerContext context, TTransport input, TTransport output) {
        events.processContext(context, input, output);
      }
    });
    if (readTable(0) == null) {
      LOG.warn("the TCP connection table (/proc/self/net/tcp) cannot be read: a dropped client's statement runs "
          + "to its end");
      return true;
    }
    int port = binary.getPortNumber();
    Thread watch = new Thread(() -> watch(connections, cli, port, pollMillis), "hive-bridge-connection-watch");
    watch.setDaemon(true);
    watch.start();
    return true;
  }

  private static Field field(Class<?> owner, String name) throws NoSuchFieldException {
    Field f = owner.getDeclaredField(name);
    f.setAccessible(true);
    return f;
  }

  /** The service's calls, their responses' statuses without stack traces. */
  static TCLIService.Iface quiet(TCLIService.Iface service) {
    InvocationHandler handler = (proxy, method, args) -> {
      Object response;
      try {
        response = method.invoke(service, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      strip(response);
      return response;
    };
    return (TCLIService.Iface) Proxy.newProxyInstance(TCLIService.Iface.class.getClassLoader(),
        new Class<?>[] {TCLIService.Iface.class}, handler);
  }

  private static void strip(Object response) {
    if (response == null) {
      return;
    }
    try {
      Method getStatus = response.getClass().getMethod("getStatus");
      Object status = getStatus.invoke(response);
      if (status instanceof TStatus) {
        ((TStatus) status).unsetInfoMessages();
      }
    } catch (NoSuchMethodException e) {
      // a response without a status
    } catch (ReflectiveOperationException e) {
      LOG.warn("cannot read a response's status", e);
    }
    if (response instanceof TGetOperationStatusResp) {
      TGetOperationStatusResp r = (TGetOperationStatusResp) response;
      if (r.isSetErrorMessage()) {
        r.setErrorMessage(messageOnly(r.getErrorMessage()));
      }
    }
  }

  /** {@code text} up to its first stack frame line ({@code "\tat ..."}), trailing blanks removed. */
  static String messageOnly(String text) {
    StringBuilder out = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      String t = line.strip();
      if (t.startsWith("at ") && Character.isWhitespace(line.isEmpty() ? 'x' : line.charAt(0))) {
        break;
      }
      if (out.length() > 0) {
        out.append('\n');
      }
      out.append(line);
    }
    return out.toString().stripTrailing();
  }

  private static Socket socketOf(TTransport transport) {
    TTransport t = transport;
    for (int i = 0; i < 8 && t != null; i++) {
      if (t instanceof TSocket) {
        return ((TSocket) t).getSocket();
      }
      TTransport inner = null;
      for (Class<?> c = t.getClass(); c != null && inner == null; c = c.getSuperclass()) {
        for (Field f : c.getDeclaredFields()) {
          if (TTransport.class.isAssignableFrom(f.getType())) {
            try {
              f.setAccessible(true);
              inner = (TTransport) f.get(t);
            } catch (ReflectiveOperationException | RuntimeException e) {
              inner = null;
            }
            if (inner != null) {
              break;
            }
          }
        }
      }
      t = inner;
    }
    return null;
  }

  private static void watch(Map<ServerContext, Connection> connections, CLIService cli, int port, long pollMillis) {
    while (true) {
      try {
        Thread.sleep(pollMillis);
        if (connections.isEmpty()) {
          continue;
        }
        Map<String, String> states = readTable(port);
        if (states == null) {
          continue;
        }
        for (Map.Entry<ServerContext, Connection> e : connections.entrySet()) {
          Connection c = e.getValue();
          Socket s = c.socket;
          if (s.getInetAddress() == null) {
            continue;
          }
          String state = states.get(key(s.getInetAddress(), s.getPort(), s.getLocalPort()));
          if (!ESTABLISHED.equals(state) && c.closed.compareAndSet(false, true)) {
            dropped(e.getKey(), s, cli);
          }
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.warn("watching client connections", e);
      }
    }
  }

  /** The client of {@code context} is gone: cancel its session's statements, close the session. */
  private static void dropped(ServerContext context, Socket socket, CLIService cli) {
    SessionHandle session;
    try {
      Method get = context.getClass().getMethod("getSessionHandle");
      get.setAccessible(true);
      session = (SessionHandle) get.invoke(context);
    } catch (ReflectiveOperationException e) {
      LOG.warn("cannot find the session of a dropped connection", e);
      return;
    }
    if (session == null) {
      return;
    }
    int cancelled = 0;
    try {
      OperationManager ops = cli.getSessionManager().getOperationManager();
      Field f = field(OperationManager.class, "handleToOperation");
      List<Operation> mine = new ArrayList<>();
      synchronized (ops) {
        for (Object o : ((Map<?, ?>) f.get(ops)).values()) {
          Operation op = (Operation) o;
          if (session.equals(op.getParentSession().getSessionHandle())) {
            mine.add(op);
          }
        }
      }
      for (Operation op : mine) {
        if (!op.getStatus().getState().isTerminal()) {
          op.cancel();
          cancelled++;
        }
      }
    } catch (Exception e) {
      LOG.warn("cancelling the statements of a dropped connection", e);
    }
    try {
      cli.closeSession(session);
    } catch (Exception e) {
      LOG.warn("closing the session of a dropped connection", e);
    }
    LOG.warn("client " + socket.getInetAddress().getHostAddress() + ":" + socket.getPort() + " of session "
        + session.getSessionId() + " dropped its connection: " + cancelled
        + " running statements cancelled, session closed");
  }

  private static String key(InetAddress address, int remotePort, int localPort) {
    return address.getHostAddress() + "|" + remotePort + "|" + localPort;
  }

  /**
   * The state of each TCP connection of this process's network namespace whose local port is {@code port} (any
   * with 0), keyed by remote address, remote port and local port; null when the kernel's table cannot be read.
   */
  static Map<String, String> readTable(int port) {
    Map<String, String> out = new HashMap<>();
    boolean any = false;
    for (String name : new String[] {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
      Path p = Paths.get(name);
      List<String> lines;
      try {
        lines = Files.readAllLines(p, StandardCharsets.US_ASCII);
      } catch (IOException e) {
        continue;
      }
      any = true;
      for (int i = 1; i < lines.size(); i++) {
        String[] f = lines.get(i).trim().split("\\s+");
        if (f.length < 4) {
          continue;
        }
        try {
          String[] local = f[1].split(":");
          String[] remote = f[2].split(":");
          int localPort = Integer.parseInt(local[1], 16);
          if (port != 0 && localPort != port) {
            continue;
          }
          InetAddress address = InetAddress.getByAddress(decode(remote[0]));
          out.put(key(address, Integer.parseInt(remote[1], 16), localPort), f[3]);
        } catch (IOException | RuntimeException e) {
          // a line of another shape: skipped
        }
      }
    }
    return any ? out : null;
  }

  /** An address as the kernel's table prints it: 32-bit words in the host's byte order, in hex. */
  private static byte[] decode(String hex) {
    byte[] out = new byte[hex.length() / 2];
    boolean little = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    for (int w = 0; w < out.length / 4; w++) {
      long v = Long.parseLong(hex.substring(w * 8, w * 8 + 8), 16);
      for (int b = 0; b < 4; b++) {
        int shift = little ? 8 * b : 8 * (3 - b);
        out[w * 4 + b] = (byte) ((v >> shift) & 0xff);
      }
    }
    return out;
  }
}
