// Starts AWS's DynamoDB Local listening on 127.0.0.1 only (its CLI binds every interface and has no
// listen-address option), on a port the OS picks. Run as a single-file source program:
//   java -Djava.library.path=<lib> -cp DynamoDBLocal.jar DynamoDbLocalLoopback.java -port N -dbPath P ...
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class DynamoDbLocalLoopback {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector) {
        ((ServerConnector) connector).setHost("127.0.0.1");
        // The CLI refuses -port 0; the connector takes it: the OS picks a free port atomically.
        ((ServerConnector) connector).setPort(0);
      }
    }
    // Exit when the parent closes our stdin (Ctrl-C, SIGTERM or a crash of npm run dev), so that no
    // Java process is ever left behind.
    Thread watchdog = new Thread(() -> {
      try {
        while (System.in.read() != -1) {}
      } catch (Exception ignored) {
      }
      System.exit(0);
    });
    watchdog.setDaemon(true);
    watchdog.start();
    proxy.start();
    // Tell the parent which port the OS picked.
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector) {
        System.out.println("DynamoDB Local listening on 127.0.0.1:" + ((ServerConnector) connector).getLocalPort());
      }
    }
    proxy.join();
  }
}
