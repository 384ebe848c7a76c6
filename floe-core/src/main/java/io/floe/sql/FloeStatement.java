package io.floe.sql;

/**
 * A statement that Floe executes itself rather than passing to the engine's SQL parser.
 * Obtain one from {@link FloeStatementParser#parse(String)}.
 */
public sealed interface FloeStatement
        permits CreateMaterializedView, RefreshMaterializedView, DropMaterializedView, AlterMaterializedView,
                ShowMaterializedViews, DescribeRelation, ShowTableProperties, DropTable, ExplainRefresh,
                ShowRefreshes, CreateStreamingTable, RefreshStreamingTable, CreateTableFedStreamingTable,
                CreateFlow {
}
