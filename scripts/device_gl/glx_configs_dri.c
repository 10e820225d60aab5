// A DRI driver for Xvfb that offers the GLX extension and Mesa swrast's framebuffer configs but
// renders nothing: installed as swrast_dri.so where Xvfb looks (LIBGL_DRIVERS_PATH), it lets
// clients that render directly (the NVIDIA driver's GLX, Mesa's own) open GLX windows on the
// server without carrying Mesa and LLVM (about 40 MB compressed) to the GPU machine.
// Why this is enough: Xvfb loads a driver only to list configs (indexConfigAttrib), to create a
// record per GLX drawable, and for indirect contexts, which it refuses by default (-iglx); a
// direct context never reaches the driver. Indirect contexts here fail with BadAlloc.
// configs.h comes from dri_dump.c run against the real swrast_dri.so (scripts/device_gl.sh).
#include <GL/internal/dri_interface.h>
#include <stdlib.h>

#include "configs.h"

struct __DRIconfigRec {
  const unsigned* attribs;  // {attribute, value} pairs ending with {0, 0}
};
struct __DRIscreenRec {
  int unused;
};
struct __DRIdrawableRec {
  int unused;
};

static int index_config_attrib(const __DRIconfig* config, int index, unsigned* attrib,
                               unsigned* value) {
  for (int i = 0; i <= index; i++)
    if (config->attribs[2 * i] == 0) return 0;
  *attrib = config->attribs[2 * index];
  *value = config->attribs[2 * index + 1];
  return 1;
}

static int get_config_attrib(const __DRIconfig* config, unsigned attrib, unsigned* value) {
  for (const unsigned* a = config->attribs; a[0]; a += 2)
    if (a[0] == attrib) return *value = a[1], 1;
  return 0;
}

static __DRIscreen* create_screen(int screen, const __DRIextension** loader,
                                  const __DRIconfig*** configs, void* data) {
  (void)screen, (void)loader, (void)data;
  // Xvfb frees the array and each config with free() (glxdriswrast.c, screen destroy).
  const __DRIconfig** list = calloc(kConfigCount + 1, sizeof *list);
  if (!list) return NULL;
  const unsigned* a = kConfigAttribs;
  for (int i = 0; i < kConfigCount; i++) {
    __DRIconfig* c = malloc(sizeof *c);
    if (!c) return NULL;
    c->attribs = a;
    while (a[0]) a += 2;
    a += 2;
    list[i] = c;
  }
  *configs = list;
  static __DRIscreen the_screen;
  return &the_screen;
}

static __DRIscreen* create_screen2(int screen, const __DRIextension** loader,
                                   const __DRIextension** driver, const __DRIconfig*** configs,
                                   void* data) {
  (void)driver;
  return create_screen(screen, loader, configs, data);
}

static void destroy_screen(__DRIscreen* screen) {
  (void)screen;
}

static const __DRIextension* no_extensions[] = {NULL};
static const __DRIextension** get_extensions(__DRIscreen* screen) {
  (void)screen;
  return no_extensions;
}

static __DRIdrawable* create_drawable(__DRIscreen* screen, const __DRIconfig* config, void* data) {
  (void)screen, (void)config, (void)data;
  return calloc(1, sizeof(__DRIdrawable));
}

static void destroy_drawable(__DRIdrawable* drawable) {
  free(drawable);
}
static void swap_buffers(__DRIdrawable* drawable) {
  (void)drawable;
}

static __DRIcontext* create_context(__DRIscreen* screen, const __DRIconfig* config,
                                    __DRIcontext* shared, void* data) {
  (void)screen, (void)config, (void)shared, (void)data;
  return NULL;
}

static __DRIcontext* create_context_api(__DRIscreen* screen, int api, const __DRIconfig* config,
                                        __DRIcontext* shared, void* data) {
  (void)api;
  return create_context(screen, config, shared, data);
}

static __DRIcontext* create_context_attribs(__DRIscreen* screen, int api, const __DRIconfig* config,
                                            __DRIcontext* shared, unsigned n,
                                            const uint32_t* attribs, unsigned* error, void* data) {
  (void)api, (void)n, (void)attribs;
  if (error) *error = __DRI_CTX_ERROR_NO_MEMORY;
  return create_context(screen, config, shared, data);
}

static int copy_context(__DRIcontext* dst, __DRIcontext* src, unsigned long mask) {
  (void)dst, (void)src, (void)mask;
  return 0;
}
static void destroy_context(__DRIcontext* context) {
  (void)context;
}
static int bind_context(__DRIcontext* context, __DRIdrawable* draw, __DRIdrawable* read) {
  (void)context, (void)draw, (void)read;
  return 0;
}
static int unbind_context(__DRIcontext* context) {
  (void)context;
  return 0;
}

static const __DRIcoreExtension core = {
    .base = {__DRI_CORE, 2},
    .destroyScreen = destroy_screen,
    .getExtensions = get_extensions,
    .getConfigAttrib = get_config_attrib,
    .indexConfigAttrib = index_config_attrib,
    .destroyDrawable = destroy_drawable,
    .swapBuffers = swap_buffers,
    .createNewContext = create_context,
    .copyContext = copy_context,
    .destroyContext = destroy_context,
    .bindContext = bind_context,
    .unbindContext = unbind_context,
};

// Version 4 as Mesa's: from 3 on, Xvfb advertises GLX_ARB_create_context(_profile).
static const __DRIswrastExtension swrast = {
    .base = {__DRI_SWRAST, 4},
    .createNewScreen = create_screen,
    .createNewDrawable = create_drawable,
    .createNewContextForAPI = create_context_api,
    .createContextAttribs = create_context_attribs,
    .createNewScreen2 = create_screen2,
};

static const __DRIextension* extensions[] = {&core.base, &swrast.base, NULL};

__attribute__((visibility("default"))) const __DRIextension** __driDriverGetExtensions_swrast(
    void) {
  return extensions;
}
