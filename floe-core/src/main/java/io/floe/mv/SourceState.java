package io.floe.mv;

import io.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The state of one source of a materialized view, as recorded at refresh time or as read from the
 * catalog now. A table source is identified by its UUID and snapshot; a view source (another MV)
 * by its UUID and view version.
 *
 * <p>Two states describe the same data when {@link #sameStateAs} holds: same object (UUID), same
 * snapshot or version, and for tables the same schema.
 */
public final class SourceState {
  /** Whether the source is a table or a view (including materialized views). */
  public enum Type {
    TABLE,
    VIEW
  }

  private final Type type;
  private final List<String> namespace;
  private final String name;
  private final String uuid;
  private final Long snapshotId;
  private final String ref;
  private final Integer schemaId;
  private final Integer versionId;

  private SourceState(
      Type type,
      List<String> namespace,
      String name,
      String uuid,
      Long snapshotId,
      String ref,
      Integer schemaId,
      Integer versionId) {
    this.type = Objects.requireNonNull(type, "type");
    this.namespace = List.copyOf(Objects.requireNonNull(namespace, "namespace"));
    this.name = Objects.requireNonNull(name, "name");
    this.uuid = Objects.requireNonNull(uuid, "uuid");
    this.snapshotId = snapshotId;
    this.ref = ref;
    this.schemaId = schemaId;
    this.versionId = versionId;
  }

  /**
   * A table source. {@code snapshotId} is null for a table that has no snapshot yet; {@code
   * schemaId} is the table's current schema, so that a schema change counts as a change.
   */
  public static SourceState table(
      List<String> namespace, String name, String uuid, Long snapshotId, Integer schemaId) {
    return new SourceState(Type.TABLE, namespace, name, uuid, snapshotId, null, schemaId, null);
  }

  /** A view source, such as another materialized view, at a view version. */
  public static SourceState view(List<String> namespace, String name, String uuid, int versionId) {
    return new SourceState(Type.VIEW, namespace, name, uuid, null, null, null, versionId);
  }

  /** This table state read from a branch or tag instead of main. */
  public SourceState withRef(String newRef) {
    return new SourceState(type, namespace, name, uuid, snapshotId, newRef, schemaId, versionId);
  }

  public Type type() {
    return type;
  }

  public List<String> namespace() {
    return namespace;
  }

  public String name() {
    return name;
  }

  /**
   * The dotted name, namespace first, a part backtick-quoted when it is not a plain identifier (so
   * that {@code a.b} the namespace level is told apart from {@code a} and {@code b}).
   */
  public String qualifiedName() {
    List<String> parts = new ArrayList<>(namespace);
    parts.add(name);
    return new QualifiedName(parts).toString();
  }

  public String uuid() {
    return uuid;
  }

  public Optional<Long> snapshotId() {
    return Optional.ofNullable(snapshotId);
  }

  public Optional<String> ref() {
    return Optional.ofNullable(ref);
  }

  public Optional<Integer> schemaId() {
    return Optional.ofNullable(schemaId);
  }

  public Optional<Integer> versionId() {
    return Optional.ofNullable(versionId);
  }

  /** True when both name the same object by identity (type, namespace, name). */
  public boolean sameObjectAs(SourceState other) {
    return type == other.type && namespace.equals(other.namespace) && name.equals(other.name);
  }

  /** True when {@code other} describes exactly the data this state describes. */
  public boolean sameStateAs(SourceState other) {
    return equals(other);
  }

  /**
   * Whether {@code current} is this table at another snapshot and nothing else differs: same table,
   * same schema, both snapshots present.
   */
  public boolean onlySnapshotDiffers(SourceState current) {
    return type == Type.TABLE
        && current.type == Type.TABLE
        && uuid.equals(current.uuid)
        && Objects.equals(schemaId, current.schemaId)
        && snapshotId != null
        && current.snapshotId != null
        && !snapshotId.equals(current.snapshotId);
  }

  /**
   * Why {@code current} differs from this recorded state, in words a user can act on, or empty
   * when it does not.
   */
  public Optional<String> describeChangeTo(SourceState current) {
    if (!uuid.equals(current.uuid)) {
      return Optional.of(qualifiedName() + " was dropped and re-created");
    }
    if (type == Type.VIEW) {
      if (!Objects.equals(versionId, current.versionId)) {
        return Optional.of(
            qualifiedName() + " definition changed (version " + versionId + " → " + current.versionId + ")");
      }
      return Optional.empty();
    }
    if (!Objects.equals(schemaId, current.schemaId)) {
      return Optional.of(
          qualifiedName() + " schema changed (schema " + schemaId + " → " + current.schemaId + ")");
    }
    if (!Objects.equals(snapshotId, current.snapshotId)) {
      return Optional.of(
          qualifiedName()
              + " has new commits (snapshot "
              + (snapshotId == null ? "none" : snapshotId)
              + " → "
              + (current.snapshotId == null ? "none" : current.snapshotId)
              + ")");
    }
    return Optional.empty();
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof SourceState)) {
      return false;
    }
    SourceState that = (SourceState) o;
    return type == that.type
        && namespace.equals(that.namespace)
        && name.equals(that.name)
        && uuid.equals(that.uuid)
        && Objects.equals(snapshotId, that.snapshotId)
        && Objects.equals(ref, that.ref)
        && Objects.equals(schemaId, that.schemaId)
        && Objects.equals(versionId, that.versionId);
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, namespace, name, uuid, snapshotId, ref, schemaId, versionId);
  }

  @Override
  public String toString() {
    return type == Type.TABLE
        ? "table " + qualifiedName() + "@" + (snapshotId == null ? "empty" : snapshotId)
        : "view " + qualifiedName() + " v" + versionId;
  }
}
