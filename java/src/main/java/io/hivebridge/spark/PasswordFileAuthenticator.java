package io.hivebridge.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.security.sasl.AuthenticationException;

import org.apache.hive.service.auth.PasswdAuthenticationProvider;

/**
 * HiveServer2's {@code hive.server2.authentication=CUSTOM} provider of {@code hive-bridge serve --auth PASSWORD}:
 * a user and password are checked against a password file of lines {@code user:pbkdf2-sha256$ITERATIONS$SALT$HASH}
 * (salt and hash in base64; PBKDF2-HMAC-SHA256, what Python's {@code hashlib.pbkdf2_hmac} computes; blank lines and
 * lines starting with {@code #} are skipped). The file is read at each login, so users added or removed take effect
 * at once. Its path is the system property {@value #FILE_PROPERTY}. Refusals never name the password.
 */
public final class PasswordFileAuthenticator implements PasswdAuthenticationProvider {
  /** The system property holding the password file's path (set by {@code hive-bridge serve}). */
  public static final String FILE_PROPERTY = "hive.bridge.password.file";
  /** The scheme tag of a line. */
  public static final String SCHEME = "pbkdf2-sha256";
  private static final int MAX_ITERATIONS = 10_000_000;
  private static final String REFUSED = "wrong user name or password";

  @Override
  public void Authenticate(String user, String password) throws AuthenticationException {
    String file = System.getProperty(FILE_PROPERTY);
    if (file == null || file.isEmpty()) {
      throw new AuthenticationException("no password file is set (" + FILE_PROPERTY + ")");
    }
    String stored = lookUp(Paths.get(file), user == null ? "" : user);
    if (password == null || password.isEmpty() || stored == null) {
      throw new AuthenticationException(REFUSED);
    }
    if (!matches(stored, password)) {
      throw new AuthenticationException(REFUSED);
    }
  }

  /** The stored hash of {@code user}, or null when the file has no such user. */
  static String lookUp(Path file, String user) throws AuthenticationException {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new AuthenticationException("cannot read the password file " + file + ": " + e.getClass().getSimpleName());
    }
    for (String line : lines) {
      String text = line.strip();
      if (text.isEmpty() || text.startsWith("#")) {
        continue;
      }
      int colon = text.lastIndexOf(':');
      if (colon > 0 && text.substring(0, colon).equals(user)) {
        return text.substring(colon + 1);
      }
    }
    return null;
  }

  /** Whether {@code password} derives the hash of {@code stored} ({@code pbkdf2-sha256$N$SALT$HASH}). */
  static boolean matches(String stored, String password) throws AuthenticationException {
    String[] parts = stored.split("\\$");
    if (parts.length != 4 || !parts[0].equals(SCHEME)) {
      throw new AuthenticationException("the password file holds a line not of the form user:" + SCHEME
          + "$ITERATIONS$SALT$HASH");
    }
    try {
      int iterations = Integer.parseInt(parts[1]);
      if (iterations < 1 || iterations > MAX_ITERATIONS) {
        throw new AuthenticationException("the password file holds an iteration count out of range");
      }
      byte[] salt = Base64.getDecoder().decode(parts[2]);
      byte[] want = Base64.getDecoder().decode(parts[3]);
      byte[] got = pbkdf2(password.getBytes(StandardCharsets.UTF_8), salt, iterations, want.length);
      return want.length > 0 && MessageDigest.isEqual(want, got);
    } catch (IllegalArgumentException e) {
      throw new AuthenticationException("the password file holds a line whose fields are not numbers / base64");
    } catch (GeneralSecurityException e) {
      throw new AuthenticationException("PBKDF2-HMAC-SHA256 is not available: " + e.getMessage());
    }
  }

  /** PBKDF2 (RFC 8018) with HMAC-SHA256, over the password's bytes as given. */
  static byte[] pbkdf2(byte[] password, byte[] salt, int iterations, int length) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(password.length == 0 ? new byte[1] : password, "HmacSHA256"));
    int blockSize = mac.getMacLength();
    byte[] out = new byte[length];
    for (int block = 1, done = 0; done < length; block++) {
      mac.update(salt);
      mac.update(new byte[] {(byte) (block >>> 24), (byte) (block >>> 16), (byte) (block >>> 8), (byte) block});
      byte[] u = mac.doFinal();
      byte[] t = u.clone();
      for (int i = 1; i < iterations; i++) {
        u = mac.doFinal(u);
        for (int j = 0; j < t.length; j++) {
          t[j] ^= u[j];
        }
      }
      int n = Math.min(blockSize, length - done);
      System.arraycopy(t, 0, out, done, n);
      done += n;
    }
    return out;
  }
}
