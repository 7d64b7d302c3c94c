package io.hivebridge.spark;

import java.lang.reflect.Field;
import java.net.InetAddress;

import javax.net.SocketFactory;

import py4j.CallbackClient;
import py4j.Gateway;
import py4j.GatewayServer;
import py4j.Py4JJavaServer;
import py4j.Py4JPythonClient;
import py4j.PythonClient;

/**
 * py4j's callback client of this driver (how the JVM calls Python objects, the hive-bridge planner among them),
 * made to authenticate to the Python side's callback server with a secret.
 *
 * <p>PySpark's default (pinned-thread) gateway builds the client with the gateway's secret, but py4j's
 * {@code PythonClient.copyWith}, called when PySpark tells the JVM the callback server's port, drops it; PySpark's
 * callback server therefore accepts every local connection. The Python side of hive-bridge makes its callback
 * server require the secret and calls {@link #authenticate} so that the JVM sends it.
 */
public final class Callbacks {
  private Callbacks() {}

  /** A pinned-thread callback client whose copies keep the secret (py4j's own copies drop it). */
  static final class AuthenticatedPythonClient extends PythonClient {
    AuthenticatedPythonClient(Gateway gateway, int port, InetAddress address, Py4JJavaServer server,
        boolean memoryManagement, int readTimeout, String token) {
      super(gateway, null, port, address, CallbackClient.DEFAULT_MIN_CONNECTION_TIME,
          CallbackClient.DEFAULT_MIN_CONNECTION_TIME_UNIT, SocketFactory.getDefault(), server, memoryManagement,
          readTimeout, token);
    }

    @Override
    public Py4JPythonClient copyWith(InetAddress pythonAddress, int pythonPort) {
      return new AuthenticatedPythonClient(gateway, pythonPort, pythonAddress, javaServer, isMemoryManagementEnabled(),
          readTimeout, authToken);
    }
  }

  /**
   * Makes the gateway's callback client send {@code token} when it connects to the Python side: "kept" when it
   * already does, "replaced" when a client sending it took the place of the old one (which is shut down: its idle
   * connections close; the next call opens an authenticated connection).
   */
  public static synchronized String authenticate(GatewayServer server, String token) {
    if (token == null || token.isEmpty()) {
      throw new IllegalArgumentException("hudi-hive: the callback secret is empty");
    }
    Gateway gateway = server.getGateway();
    Py4JPythonClient current = gateway.getCallbackClient();
    if (!(current instanceof CallbackClient client)) {
      throw new IllegalStateException("hudi-hive: py4j's callback client is a "
          + (current == null ? "null" : current.getClass().getName()) + ", which hive-bridge cannot make "
          + "authenticate");
    }
    if (token.equals(read(CallbackClient.class, "authToken", client))) {
      return "kept";
    }
    Py4JPythonClient next;
    if (client instanceof PythonClient pinned) {
      next = new AuthenticatedPythonClient(pinned.getGateway() != null ? pinned.getGateway() : gateway,
          pinned.getPort(), pinned.getAddress(), pinned.getJavaServer(), pinned.isMemoryManagementEnabled(),
          pinned.getReadTimeout(), token);
    } else {
      next = new CallbackClient(client.getPort(), client.getAddress(), token,
          CallbackClient.DEFAULT_MIN_CONNECTION_TIME, CallbackClient.DEFAULT_MIN_CONNECTION_TIME_UNIT,
          SocketFactory.getDefault(),
          client.isMemoryManagementEnabled(), client.getReadTimeout());
    }
    write(Gateway.class, "cbClient", gateway, next);
    current.shutdown();
    return "replaced";
  }

  /** Whether the gateway's callback client sends {@code token} (for tests). */
  public static boolean sends(GatewayServer server, String token) {
    Py4JPythonClient current = server.getGateway().getCallbackClient();
    return current instanceof CallbackClient c && token != null
        && token.equals(read(CallbackClient.class, "authToken", c));
  }

  private static Field field(Class<?> owner, String name) {
    try {
      Field f = owner.getDeclaredField(name);
      f.setAccessible(true);
      return f;
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("hudi-hive: this py4j has no field " + owner.getName() + "." + name
          + ", which hive-bridge needs to make the callback client authenticate: " + e);
    }
  }

  private static Object read(Class<?> owner, String name, Object target) {
    try {
      return field(owner, name).get(target);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("hudi-hive: cannot read " + owner.getName() + "." + name + ": " + e);
    }
  }

  private static void write(Class<?> owner, String name, Object target, Object value) {
    try {
      field(owner, name).set(target, value);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("hudi-hive: cannot set " + owner.getName() + "." + name + ": " + e);
    }
  }
}
