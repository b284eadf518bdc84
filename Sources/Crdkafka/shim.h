#ifndef FOCUSGATE_CRDKAFKA_SHIM_H
#define FOCUSGATE_CRDKAFKA_SHIM_H

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/*
 * The mock cluster's per-broker error injector is variadic, which Swift cannot call.
 * This shim pushes one (error, rtt) tuple at a time.
 */
static inline rd_kafka_resp_err_t focusgate_mock_broker_push_request_error_rtt(
    rd_kafka_mock_cluster_t *mcluster, int32_t broker_id, int16_t api_key,
    rd_kafka_resp_err_t err, int rtt_ms) {
    return rd_kafka_mock_broker_push_request_error_rtts(mcluster, broker_id, api_key, 1, err, rtt_ms);
}

#endif
