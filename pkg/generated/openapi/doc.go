// Package openapi holds the generated OpenAPI definitions of every type the server serves.
package openapi
