package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestErrorBody(t *testing.T) {
	tests := []struct {
		name, body, code, msg string
		delay                 time.Duration
	}{
		{"openai", `{"error":{"message":"bad key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "invalid_api_key", "bad key", 0},
		{"openai without code", `{"error":{"message":"overloaded","type":"server_error","code":null}}`, "server_error", "overloaded", 0},
		{"anthropic", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "rate_limit_error", "slow down", 0},
		{"gemini", `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`, "RESOURCE_EXHAUSTED", "quota", 1500 * time.Millisecond},
		{"gemini reason", `{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}`, "API_KEY_INVALID", "API key not valid.", 0},
		{"ollama", `{"error":"model \"x\" not found, try pulling it first"}`, "", `model "x" not found, try pulling it first`, 0},
		{"plain message", `{"message":"no such route"}`, "", "no such route", 0},
		{"html", "<html>\n<body>  Bad   Gateway </body></html>", "", "<html> <body> Bad Gateway </body></html>", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg, delay := errorBody([]byte(tt.body))
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.msg, msg)
			assert.Equal(t, tt.delay, delay)
		})
	}
}
