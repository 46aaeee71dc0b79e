/*
 * Starts AWS's DynamoDB Local exactly as its own ServerRunner does, but with its Jetty connector bound to
 * 127.0.0.1. DynamoDB Local has no host option (`-help` lists port, dbPath, sharedDb, inMemory, cors,
 * delayTransientStatuses, disableTelemetry, optimizeDbBeforeStartup) and its DynamoDBProxyServer builds
 * `new org.eclipse.jetty.server.Server(port)`, which listens on every interface; it accepts any credentials.
 * Setting the connector's host before start() is Jetty's own way to pick the bind address
 * (ServerConnector#setHost). Run by local/dynamodb.ts in the JDK's single-file source mode (java Foo.java).
 */
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDBLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) {
      if (!(connector instanceof ServerConnector)) {
        throw new IllegalStateException("unexpected connector " + connector.getClass().getName());
      }
      ((ServerConnector) connector).setHost("127.0.0.1");
    }
    proxy.start();
    System.out.println("DynamoDB Local listening on 127.0.0.1 only");
  }
}
